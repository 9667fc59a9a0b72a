// Package heapsample turns the runtime's heap sampling off for a run that writes no heap
// profile (the hidden --memprofile flag of pkg/cmd). Import it for its side effect, from
// main only.
//
// By default the runtime records the stack of one allocation in every 512 KiB. Each record
// unwinds the allocating goroutine's stack through the binary's function tables, and in a
// binary this size those reads map pages nothing else needs: 1.8 MiB of a manifest generate's
// max RSS (hack/bench-render.sh), with no profile ever written.
//
// It is a package initialiser, not a line of main, because half of a short command's
// allocations are package initialisation's (helm's JSON-schema library, client-go's
// schemes): Go initialises a package once its imports are, in import-path order, so this
// one runs before those of most third-party packages.
package heapsample

import (
	"os"
	"runtime"
	"strings"
)

func init() {
	if !profiling(os.Args[1:]) {
		runtime.MemProfileRate = 0
	}
}

// profiling says whether the command line asks for a heap profile.
func profiling(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--memprofile" || strings.HasPrefix(a, "--memprofile=") {
			return true
		}
	}
	return false
}
