package printer

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/istioctl-installer/istioctl/operator/tag"
)

// Tags prints revision tags: a table (TAG, REVISION, NAMESPACES), JSON, YAML, or a kubectl
// format (ListFormats): -o name prints tag/<name>, the name 'tag remove' takes. With no tags,
// table, json and yaml print upstream's line instead; the kubectl formats print what an
// empty list gives (nothing, for name and custom-columns).
func Tags(w io.Writer, tags []tag.Description, f Format) error {
	if kubectlFormat(f) {
		p, err := kubectlPrinter(f)
		if err != nil {
			return err
		}
		l := listing{apiVersion: "v1", kind: "Tag"}
		for _, t := range tags {
			l.entries = append(l.entries, t)
			l.names = append(l.names, t.Tag)
		}
		return l.print(w, p)
	}
	if len(tags) == 0 {
		_, err := fmt.Fprintln(w, "No Istio revision tags found.")
		return err
	}
	switch f {
	case JSON, YAML:
		return encode(w, f, tags, encoding{indent: "\t", blankLine: true})
	}
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	fmt.Fprintln(tw, "TAG\tREVISION\tNAMESPACES")
	for _, t := range tags {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Tag, t.Revision, strings.Join(t.Namespaces, ","))
	}
	return tw.Flush()
}
