package printer

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/tag"
)

// Warnings returns a function printing each warning of a spec or a chart as one
// "! warning: ..." line on w.
func Warnings(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintf(w, "! warning: %s\n", msg) }
}

// Verdict closes a check report: on failure a pointer to the ✘ lines on errOut, otherwise
// the all-clear of the report's kind on out; text only (the other formats carry the
// summary).
func Verdict(out, errOut io.Writer, rep *check.Report, failed bool, f Format) {
	if f != Text {
		return
	}
	switch {
	case failed:
		fmt.Fprintf(errOut, "%s found problems: see the ✘ lines above\n", rep.Command)
	case rep.Kind == check.KindVerify && !rep.Fleet:
		fmt.Fprintln(out, "✔ Istio is installed and verified successfully")
	case rep.Kind == check.KindVerify:
		fmt.Fprintln(out, "✔ Every cluster of the fleet is installed, verified and linked")
	case rep.Fleet:
		fmt.Fprintln(out, "✔ No issues found when checking the clusters of the fleet. The fleet is safe to install!")
	default:
		fmt.Fprintln(out, "✔ No issues found when checking the cluster. Istio is safe to install or upgrade!")
	}
}

// Leaving says, before an uninstall, what it leaves alone because the spec relies on it.
func Leaving(w io.Writer, components []string) {
	if len(components) == 0 {
		return
	}
	fmt.Fprintf(w, "Leaving %s alone, and the revision's tags and install records: this spec relies on them and does not install them.\n", strings.Join(components, ", "))
}

// Objects lists objects, one indented line each.
func Objects(w io.Writer, objects []string) {
	for _, o := range objects {
		fmt.Fprintf(w, "  %s\n", o)
	}
}

// Line prints one line.
func Line(w io.Writer, s string) { fmt.Fprintln(w, s) }

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

// Profiles prints the profile names as a list, JSON or YAML.
func Profiles(w io.Writer, names []string, f Format) error {
	var err error
	switch f {
	case JSON, YAML:
		err = encode(w, f, map[string][]string{"profiles": names}, encoding{})
	default:
		_, err = fmt.Fprintf(w, "Istio configuration profiles:\n    %s\n", strings.Join(names, "\n    "))
	}
	return err
}

// ProfileDiff prints a profile diff, or that the two are the same.
func ProfileDiff(w io.Writer, a, b, diff string) error {
	if diff == "" {
		_, err := fmt.Fprintf(w, "Profiles %q and %q are the same.\n", a, b)
		return err
	}
	_, err := io.WriteString(w, diff)
	return err
}

// Manifests writes rendered manifests (docs, named by component in names): to w when path
// is "", into the file path, or with dir one <name>.yaml each into the directory path.
// Each doc writes itself (render.Text): a render is most of a MiB, never copied whole.
func Manifests(w io.Writer, path string, dir bool, names []string, docs []io.WriterTo) error {
	if dir {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return err
		}
		for i, d := range docs {
			if err := writeFile(filepath.Join(path, names[i]+".yaml"), d); err != nil {
				return err
			}
		}
		return nil
	}
	if path != "" {
		return writeFile(path, docs...)
	}
	for _, d := range docs {
		if _, err := d.WriteTo(w); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes docs one after another into the file path, as os.WriteFile does.
func writeFile(path string, docs ...io.WriterTo) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if _, err := d.WriteTo(f); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// IsDirTarget says whether an output path names a directory: it ends in / or is one.
func IsDirTarget(p string) bool {
	if strings.HasSuffix(p, "/") {
		return true
	}
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
