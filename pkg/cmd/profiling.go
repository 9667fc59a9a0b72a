package cmd

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/pflag"
)

// profiling holds the hidden --cpuprofile and --memprofile flags: pprof profiles of one
// real command against a real cluster (hack/bench-scale.sh PROFILE=DIR writes them; read
// them with go tool pprof bin/istioctl FILE). Heap sampling is on only when --memprofile is on
// the command line (pkg/heapsample, imported by main).
type profiling struct {
	cpu, mem string
	cpuFile  *os.File
}

func (p *profiling) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.cpu, "cpuprofile", "", "Write a CPU profile of the command to this file")
	fs.StringVar(&p.mem, "memprofile", "", "Write a heap profile (allocations and what is live at the end) to this file")
	_ = fs.MarkHidden("cpuprofile")
	_ = fs.MarkHidden("memprofile")
}

func (p *profiling) start() error {
	if p.cpu == "" || p.cpuFile != nil {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	p.cpuFile = f
	return nil
}

func (p *profiling) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		p.cpuFile = nil
	}
	if p.mem != "" {
		f, err := os.Create(p.mem)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
	}
	return nil
}

// Execute builds the command tree, runs it with os.Args and, whatever the outcome, writes
// the profiles the hidden --cpuprofile and --memprofile flags ask for.
func Execute(ctx context.Context, streams Streams) error {
	g := &Globals{Streams: streams}
	root := newRootCommand(g)
	err := root.ExecuteContext(ctx)
	if perr := g.profiling.stop(); perr != nil {
		if err == nil {
			return perr
		}
		fmt.Fprintln(streams.ErrOut, perr)
	}
	return err
}
