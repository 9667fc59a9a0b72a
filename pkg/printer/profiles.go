package printer

import (
	"fmt"
	"io"
	"strings"
)

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

// ProfileDump prints a resolved spec (or its part at a config path) as YAML or JSON, or the
// --set flags that rebuild it, a line each.
func ProfileDump(w io.Writer, f Format, spec any, flags []string) error {
	if f == Flags {
		if len(flags) == 0 {
			return nil
		}
		_, err := io.WriteString(w, strings.Join(flags, "\n")+"\n")
		return err
	}
	return encode(w, f, spec, encoding{})
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
