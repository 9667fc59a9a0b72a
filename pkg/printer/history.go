package printer

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/istioctl-installer/istioctl/operator/check"
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
	fmt.Fprintln(tw, "REVISION\tRECORD\tUPDATED\tSTATUS\tTRUST\tPROFILE\tISTIOCTL VERSION\tDESCRIPTION")
	untrusted := 0
	for _, r := range records {
		word, bad := trustWord(r.Trust)
		if bad {
			untrusted++
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Revision, r.Number, r.Time.Local().Format(time.DateTime),
			r.Outcome, word, dash(r.Profile), dash(r.ToolVersion), dash(r.Description))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if untrusted > 0 {
		_, err := fmt.Fprintf(w, "\n%d UNTRUSTED record(s): istioctl keeps a digest of every record it writes on the records' Namespace, and these have none, or one that differs (written or changed by another account, or by an istioctl from before seals). rollback, install --atomic and --pin-digests do not use them; see %shistory.md#sealed-records.\n", untrusted, check.DocsURL)
		return err
	}
	return nil
}

// trustWord words what a record's seal says, and whether that makes it untrusted ("-" for
// a record not judged).
func trustWord(t history.Trust) (string, bool) {
	switch t {
	case history.Sealed:
		return "sealed", false
	case history.Unsealed:
		return "UNTRUSTED (no seal)", true
	case history.Changed:
		return "UNTRUSTED (seal differs)", true
	case history.Unverified:
		return "UNTRUSTED (seals unreadable)", true
	}
	return "-", false
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
