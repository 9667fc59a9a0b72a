package printer

import (
	"fmt"
	"io"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/revision"
)

// Revisions prints x revision list: a block per revision (text), or the list as JSON or
// YAML ({"revisions": [...]}).
func Revisions(w io.Writer, revs []*revision.Revision, f Format) error {
	switch f {
	case JSON, YAML:
		return encode(w, f, map[string]any{"revisions": revs}, encoding{blankLine: true})
	}
	if len(revs) == 0 {
		_, err := fmt.Fprintln(w, "No Istio revisions found.")
		return err
	}
	var b strings.Builder
	for i, r := range revs {
		if i > 0 {
			b.WriteString("\n")
		}
		revisionText(&b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func revisionText(b *strings.Builder, r *revision.Revision) {
	switch {
	case r.Namespace != "":
		fmt.Fprintf(b, "REVISION %s: istiod %s in %s\n", r.Name, orNone(r.Version), r.Namespace)
	default:
		fmt.Fprintf(b, "REVISION %s: no istiod\n", r.Name)
	}
	fmt.Fprintf(b, "  tags: %s\n", orNone(strings.Join(r.Tags, ", ")))
	b.WriteString("  components:")
	if len(r.Components) == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\n")
	for _, c := range r.Components {
		fmt.Fprintf(b, "    %s %s %s ready %s\n", c.Name, c.Object, orNone(c.Version), c.Ready)
	}
	b.WriteString("  namespaces:")
	if len(r.Namespaces) == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\n")
	for _, s := range r.Namespaces {
		via := s.Label
		if s.Tag != "" {
			via += ", tag " + s.Tag
		}
		fmt.Fprintf(b, "    %s (%s)\n", s.Namespace, via)
	}
	b.WriteString("  workloads:")
	if len(r.Workloads) == 0 {
		b.WriteString(" none")
	}
	if n := r.OutOfSkew(); n > 0 {
		fmt.Fprintf(b, " (%d proxies out of skew)", n)
	}
	b.WriteString("\n")
	for _, wl := range r.Workloads {
		fmt.Fprintf(b, "    %s\n", wl.Ref())
		for _, p := range wl.Pods {
			fmt.Fprintf(b, "      %s proxy %s", p.Pod, p.Version)
			if p.Skew != nil {
				fmt.Fprintf(b, " OUT OF SKEW: %s", p.Skew)
			}
			b.WriteString("\n")
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
