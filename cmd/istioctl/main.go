// Command istioctl installs, upgrades, verifies and removes the Istio service mesh.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/gcpace"
	_ "github.com/istioctl-installer/istioctl/pkg/heapsample" // no heap sampling unless --memprofile
)

func main() {
	os.Exit(run())
}

func run() int {
	gcpace.Start()
	// The first Ctrl-C (or SIGTERM) asks the command to stop at a safe point; after it the
	// default handling is back, so a second one kills the process.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		signal.Stop(sigs)
		// Cancelled first: once the line is out, the run is stopping (tests wait for it).
		cancel()
		fmt.Fprintln(os.Stderr, "\nStopping at a safe point (press Ctrl-C again to quit at once)...")
	}()
	err := cmd.Execute(ctx, cmd.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err == nil {
		return 0
	}
	var exit *cmd.ExitError
	if !errors.As(err, &exit) {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
	}
	return ExitCode(err)
}

// ExitCode maps an error to istioctl's exit codes (operator/event's table,
// docs/exit-codes.md): 64 for a bad command line, a command's own code (profile diff,
// verify-install and precheck exit 1 when they found differences or failures, having printed
// them), 130 for a run stopped by Ctrl-C, 1 otherwise.
func ExitCode(err error) int {
	var usage *cmd.UsageError
	if errors.As(err, &usage) {
		return event.ExitUsage
	}
	var exit *cmd.ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	return event.ExitCode(err)
}
