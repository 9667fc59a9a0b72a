package printer

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/istioctl-installer/istioctl/operator/history"
)

// History prints install records: a table (one line per record, oldest first within each
// revision), a JSON array (or YAML list) of the whole records, or a kubectl format
// (ListFormats): -o name names each record's Secret, as kubectl would.
func History(w io.Writer, records []*history.Record, f Format) error {
	if kubectlFormat(f) {
		p, err := kubectlPrinter(f)
		if err != nil {
			return err
		}
		l := listing{apiVersion: "v1", kind: "Secret"}
		for _, r := range records {
			l.entries = append(l.entries, r)
			l.names = append(l.names, history.SecretName(r.Revision, r.Number))
		}
		return l.print(w, p)
	}
	if f == JSON || f == YAML {
		if records == nil {
			records = []*history.Record{}
		}
		return encode(w, f, records, encoding{})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tRECORD\tUPDATED\tSTATUS\tPROFILE\tISTIOCTL VERSION\tDESCRIPTION")
	for _, r := range records {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Revision, r.Number, r.Time.Local().Format(time.DateTime),
			r.Outcome, dash(r.Profile), dash(r.ToolVersion), dash(r.Description))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
