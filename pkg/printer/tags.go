package printer

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/istioctl-installer/istioctl/operator/check"
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

// TagOverlaps is upstream's conflict notice, one line per overlapping webhook.
func TagOverlaps(w io.Writer, results []check.Result) {
	var b strings.Builder
	b.WriteString("creating tag would conflict, pass --skip-confirmation to proceed:\n")
	for _, r := range results {
		kind, name, _ := strings.Cut(r.Object, "/")
		fmt.Fprintf(&b, "Error [%s] (%s %s) %s\n", r.Code, kind, name, r.Message)
	}
	io.WriteString(w, b.String())
}

// TagChanges lists what applying a tag did to each object.
func TagChanges(w io.Writer, changes []tag.Change) {
	for _, c := range changes {
		fmt.Fprintf(w, "  %s %s\n", c.Object, c.Status)
	}
}

// tagCreated is upstream's message, line break included.
const tagCreated = `Revision tag %q created, referencing control plane revision %q. To enable injection using this
revision tag, use 'kubectl label namespace <NAMESPACE> istio.io/rev=%s'
`

// TagSet says what tag set did.
func TagSet(w io.Writer, tagName, revision string, dryRun bool) {
	if dryRun {
		fmt.Fprintf(w, "Dry run: revision tag %q would reference control plane revision %q; nothing was written\n", tagName, revision)
		return
	}
	fmt.Fprintf(w, tagCreated, tagName, revision, tagName)
}

// TagRemoved says what tag remove removed.
func TagRemoved(w io.Writer, tagName string, objects []string) {
	for _, o := range objects {
		fmt.Fprintf(w, "  %s removed\n", o)
	}
	fmt.Fprintf(w, "Revision tag %s removed\n", tagName)
}
