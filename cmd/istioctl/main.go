// Command istioctl installs, upgrades, verifies and removes the Istio service mesh.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
)

func main() {
	os.Exit(run())
}

func run() int {
	// The first Ctrl-C (or SIGTERM) asks the command to stop at a safe point; after it the
	// default handling is back, so a second one kills the process.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		signal.Stop(sigs)
		fmt.Fprintln(os.Stderr, "\nStopping at a safe point (press Ctrl-C again to quit at once)...")
		cancel()
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

// ExitCode maps an error to istioctl's exit codes: 64 for a bad command line, 3 for a
// writer that gave up waiting for another's cluster lock, 130 for a run stopped by Ctrl-C
// (as shells report SIGINT), 1 otherwise (a run that lost the cluster lock too).
func ExitCode(err error) int {
	var usage *cmd.UsageError
	if errors.As(err, &usage) {
		return 64
	}
	var exit *cmd.ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	var held *cmd.LockHeldError
	if errors.As(err, &held) {
		return 3
	}
	var lost *cmd.LockLostError
	if errors.As(err, &lost) {
		return 1
	}
	if errors.Is(err, context.Canceled) {
		return 130
	}
	return 1
}
