package printer

import (
	"fmt"
	"io"

	"github.com/istioctl-installer/istioctl/operator/check"
)

// Blocked words a pre-write gate that stopped a run: what it found, each error with its
// hint, and that nothing was written (--force turns these errors into warnings); prefix is
// what the error that carries it says before it.
func Blocked(w io.Writer, prefix string, b *check.Blocked) {
	fmt.Fprintf(w, "Error: %s%s:\n", prefix, b.Headline())
	for _, r := range b.Results {
		fmt.Fprintf(w, "  ✘ %s: %s\n    hint: %s\n", r.Object, r.Message, r.Hint)
	}
	fmt.Fprintln(w, "Nothing was written. Fix them, or install anyway with --force")
}
