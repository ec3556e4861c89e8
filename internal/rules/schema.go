package rules

import (
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON Schema.
type Schema struct{ schema *jsonschema.Schema }

// CompileSchema compiles the JSON Schema file at path.
func CompileSchema(path string) (*Schema, error) {
	c := jsonschema.NewCompiler()
	s, err := c.Compile(path)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %s", path, oneLine(err))
	}
	return &Schema{schema: s}, nil
}

// oneLine folds a multi-line error into one line, for file:line: messages.
func oneLine(err error) string {
	var parts []string
	for line := range strings.SplitSeq(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// CompileInlineSchema compiles a schema written in routes.yaml; name
// identifies it in errors.
func CompileInlineSchema(name string, doc any) (*Schema, error) {
	c := jsonschema.NewCompiler()
	url := "inline:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("inline schema: %s", oneLine(err))
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("inline schema: %s", oneLine(err))
	}
	return &Schema{schema: s}, nil
}

// Match reports whether body satisfies the schema.
func (s *Schema) Match(body any) bool {
	return s.schema.Validate(body) == nil
}

// Check returns why body does not satisfy the schema, or nil.
func (s *Schema) Check(body any) error {
	return s.schema.Validate(body)
}
