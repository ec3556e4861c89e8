// Command demo-backend stands in for a legacy webhook backend: it prints
// every request it receives, so the example shows what Hookgate delivers.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"sort"
	"strings"
	"time"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:9000", "address to listen on")
	flag.Parse()
	log.SetFlags(0)
	log.Printf("demo backend listening on http://%s", *addr)
	err := http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var b strings.Builder
		fmt.Fprintf(&b, "\n=== %s  %s %s\n", time.Now().Format(time.TimeOnly), r.Method, r.RequestURI)
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Header[k], ", "))
		}
		fmt.Fprintf(&b, "\n%s\n", body)
		log.Print(b.String())
		fmt.Fprintln(w, "ok")
	}))
	log.Fatal(err)
}
