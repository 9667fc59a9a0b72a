package printer

import (
	"fmt"
	"io"

	"github.com/istioctl-installer/istioctl/operator/check"
)

// Blocked words a pre-write gate that stopped a run: what it found, each error with its
// hint, that nothing was written, and the option that lifts the gate (--force, or
// --take-ownership for the ownership gate); prefix is what the error that carries it says
// before it.
func Blocked(w io.Writer, prefix string, b *check.Blocked) {
	fmt.Fprintf(w, "Error: %s%s:\n", prefix, b.Headline())
	for _, r := range b.Results {
		fmt.Fprintf(w, "  ✘ %s: %s\n    hint: %s\n", r.Object, r.Message, r.Hint)
	}
	lift := b.LiftedBy()
	fmt.Fprintf(w, "Nothing was written. Fix them, or %s with %s\n", lift.Does(), lift.Flag())
}
