package printer

import (
	"fmt"
	"io"
	"strings"
)

// Warnings returns a function printing each warning of a spec or a chart as one
// "! warning: ..." line on w.
func Warnings(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintf(w, "! warning: %s\n", msg) }
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
