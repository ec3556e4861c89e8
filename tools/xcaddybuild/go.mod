module github.com/hookgate/hookgate/tools/xcaddybuild

go 1.26.0

require github.com/caddyserver/xcaddy v0.4.5

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/akavel/rsrc v0.10.2 // indirect
	github.com/google/shlex v0.0.0-20191202100458-e7afc7fbc510 // indirect
	github.com/josephspurrier/goversioninfo v1.5.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)

replace github.com/hookgate/hookgate => ../..
