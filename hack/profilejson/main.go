// Command profilejson prints a Helm-level profile (YAML) as the JSON the charts read with
// fromJson (hack/sync-helm-profiles.sh). It converts with sigs.k8s.io/yaml, the conversion
// Helm's fromYaml applies before decoding JSON, so fromJson of its output gives the values
// fromYaml gives of the YAML, at a fifth of the memory (a render reads a profile per chart).
//
//	profilejson manifests/helm-profiles/demo.yaml >files/profile-demo.json
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: profilejson FILE.yaml")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "profilejson:", err)
		os.Exit(1)
	}
}

func run(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, j, "", "  "); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	out.WriteByte('\n')
	_, err = os.Stdout.Write(out.Bytes())
	return err
}
