package printer

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/istioctl-installer/istioctl/operator/history"
)

// Table is the tabular format of listings.
const Table Format = "table"

// History prints install records: a table (one line per record, oldest first within each
// revision) or a JSON array of the whole records.
func History(w io.Writer, records []*history.Record, f Format) error {
	if f == JSON {
		if records == nil {
			records = []*history.Record{}
		}
		b, err := json.MarshalIndent(records, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
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
