// Command fleetsplit splits `istioctl x fleet dump -o json` (stdin) into the files
// hack/bench-fleet.sh runs upstream's documented multi-cluster steps from, in DIR:
//
//	clusters            one line per cluster: name context role primary ("-" for none)
//	NAME.iop.json       the cluster's IstioOperator as dumped (what our install takes)
//	NAME.upstream.json  the same without spec.external, which upstream's IstioOperator lacks
//	NAME.ns             its istio namespace's name, then "label K=V" and "annotate K=V" lines
//	links               one line per link: fromContext fromName intoContext
//
// Each spec.external it strips is named on stderr. Written in Go because the bench has no
// JSON tool to rely on (jq is not among the tools .ci/run installs).
//
//	istioctl x fleet dump -f fleet.yaml -o json | fleetsplit DIR
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type dump struct {
	Clusters []struct {
		Name, Context, Role, Primary string
		Namespace                    struct {
			Name                string
			Labels, Annotations map[string]string
		}
		IstioOperator map[string]any
	}
	Links []struct{ From, FromContext, IntoContext string }
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fleetsplit DIR <dump.json")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "fleetsplit:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	var d dump
	if err := json.NewDecoder(os.Stdin).Decode(&d); err != nil {
		return fmt.Errorf("reading the fleet dump on stdin: %w", err)
	}
	var clusters, links strings.Builder
	for _, c := range d.Clusters {
		primary := c.Primary
		if primary == "" {
			primary = "-"
		}
		fmt.Fprintf(&clusters, "%s %s %s %s\n", c.Name, c.Context, c.Role, primary)
		if err := writeJSON(filepath.Join(dir, c.Name+".iop.json"), c.IstioOperator); err != nil {
			return err
		}
		if spec, _ := c.IstioOperator["spec"].(map[string]any); spec != nil && spec["external"] != nil {
			delete(spec, "external")
			fmt.Fprintf(os.Stderr, "fleetsplit: %s: spec.external stripped for upstream\n", c.Name)
		}
		if err := writeJSON(filepath.Join(dir, c.Name+".upstream.json"), c.IstioOperator); err != nil {
			return err
		}
		ns := c.Namespace.Name + "\n" + pairs("label", c.Namespace.Labels) + pairs("annotate", c.Namespace.Annotations)
		if err := os.WriteFile(filepath.Join(dir, c.Name+".ns"), []byte(ns), 0o644); err != nil {
			return err
		}
	}
	for _, l := range d.Links {
		fmt.Fprintf(&links, "%s %s %s\n", l.FromContext, l.From, l.IntoContext)
	}
	if err := os.WriteFile(filepath.Join(dir, "clusters"), []byte(clusters.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "links"), []byte(links.String()), 0o644)
}

// pairs are "VERB K=V" lines, sorted.
func pairs(verb string, m map[string]string) string {
	var lines []string
	for k, v := range m {
		lines = append(lines, fmt.Sprintf("%s %s=%s\n", verb, k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
