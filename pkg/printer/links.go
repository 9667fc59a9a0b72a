package printer

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/link"
)

// RemoteClusters prints remote-clusters: upstream's table (NAME SECRET STATUS ISTIOD
// REVISION, spaced as upstream's) and then the link checks' report; -o json and yaml print
// both as {clusters, links}; the kubectl formats print the table's rows (-o name:
// remotecluster/<name>).
func RemoteClusters(w io.Writer, rows []link.Row, rep *check.Report, f Format) error {
	if kubectlFormat(f) {
		p, err := kubectlPrinter(f)
		if err != nil {
			return err
		}
		l := listing{apiVersion: "v1", kind: "RemoteCluster"}
		for _, r := range rows {
			l.entries = append(l.entries, r)
			l.names = append(l.names, r.Name)
		}
		return l.print(w, p)
	}
	switch f {
	case JSON, YAML:
		if rows == nil {
			rows = []link.Row{}
		}
		doc := struct {
			Clusters []link.Row    `json:"clusters"`
			Links    *check.Report `json:"links"`
		}{rows, rep}
		return encode(w, f, doc, encoding{})
	}
	tw := tabwriter.NewWriter(w, 0, 8, 5, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSECRET\tSTATUS\tISTIOD\tREVISION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Secret, tableStatus(r), r.Istiod, r.Revision)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return text(w, rep, false)
}

// tableStatus is a row's status with, when unknown, why in a few words (the report has
// the whole reason).
func tableStatus(r link.Row) string {
	if r.Status != link.StatusUnknown {
		return r.Status
	}
	if strings.HasPrefix(r.Reason, "no istiod") {
		return r.Status + " (no istiod)"
	}
	return r.Status + " (could not ask istiod)"
}

// Retrying says, on errOut, that --wait looks again.
func Retrying(w io.Writer, attempt int, rep *check.Report) {
	fmt.Fprintf(w, "%s %d link problem(s) (attempt %d); checking again...\n", yellow("!"), rep.Summary.Errors, attempt)
}

// Join lists names on one line.
func Join(names []string) string { return strings.Join(names, ", ") }

// SecretApplied is what create-remote-secret --apply-to wrote: the Secret, where it went,
// whether it was created or replaced, who it authenticates as there, the cluster it reads
// and its server, the token it carries and the previous tokens.
type SecretApplied struct {
	Secret, Context, Identity string
	Created                   bool
	ClusterID, Server         string
	// TokenKind words the credentials; TokenSecret is the token's Secret (none for a
	// credential that is no token Secret); Expires is nil for a token that does not expire.
	TokenKind, TokenSecret string
	Expires                *time.Time
	// Deleted are the previous tokens' Secrets, deleted; Kept the previous one left.
	Deleted []string
	Kept    string
}

// RemoteSecretApplied says what create-remote-secret --apply-to wrote, the token's kind and
// expiry and what happened to the previous tokens (never a token).
func RemoteSecretApplied(w io.Writer, res *SecretApplied) {
	if res.Secret == "" {
		return
	}
	verb := "created"
	if !res.Created {
		verb = "updated"
	}
	who := ""
	if res.Identity != "" {
		who = " as " + res.Identity
	}
	fmt.Fprintf(w, "%s Secret %s %s in context %s: its istiod reads cluster %s at %s%s\n",
		green("✔"), res.Secret, verb, res.Context, res.ClusterID, res.Server, who)
	fmt.Fprintf(w, "  credentials: %s", res.TokenKind)
	if res.TokenSecret != "" {
		fmt.Fprintf(w, ", in %s of cluster %s", res.TokenSecret, res.ClusterID)
	}
	fmt.Fprintln(w)
	if res.Expires != nil {
		fmt.Fprintf(w, "  expires: %s (in %s); run this command again before then\n", res.Expires.UTC().Format(time.RFC3339), time.Until(*res.Expires).Round(time.Minute))
	} else if res.TokenSecret != "" {
		fmt.Fprintln(w, "  expires: never; run this command again to rotate it")
	}
	for _, d := range res.Deleted {
		fmt.Fprintf(w, "  previous token: %s deleted: it stops authenticating within seconds (the apiserver caches a token's authentication briefly)\n", d)
	}
	if res.Kept != "" {
		fmt.Fprintf(w, "  previous token: %s kept: other clusters' links may use it; delete it once none does\n", res.Kept)
	}
}
