// Command fingerprint reads rendered manifests on standard input and writes their
// fingerprint (see pkg/testing/fingerprint) as JSON: `make upstream-fingerprints` uses it to
// record what upstream istioctl renders for each profile, without keeping its manifests.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/testing/fingerprint"
)

func main() {
	compare := flag.String("compare", "", "instead of printing, compare with this fingerprint file and list the differences (exit 1 if any)")
	flag.Parse()
	data, err := io.ReadAll(os.Stdin)
	if err == nil && *compare != "" {
		want := map[string]fingerprint.Object{}
		b, err := os.ReadFile(*compare)
		if err == nil {
			err = json.Unmarshal(b, &want)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fingerprint:", err)
			os.Exit(2)
		}
		diffs := fingerprint.Diff(want, fingerprint.Of(must(render.ParseObjects(data))))
		for _, d := range diffs {
			fmt.Println(d)
		}
		fmt.Printf("%d objects upstream, %d differences\n", len(want), len(diffs))
		if len(diffs) > 0 {
			os.Exit(1)
		}
		return
	}
	if err == nil {
		var objs = must(render.ParseObjects(data))
		var b []byte
		b, err = json.MarshalIndent(fingerprint.Of(objs), "", "  ")
		if err == nil {
			_, err = os.Stdout.Write(append(b, '\n'))
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fingerprint:", err)
		os.Exit(1)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, "fingerprint:", err)
		os.Exit(1)
	}
	return v
}
