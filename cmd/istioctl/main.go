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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := cmd.NewRootCommand(cmd.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var exit *cmd.ExitError
	if !errors.As(err, &exit) {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
	}
	return ExitCode(err)
}

// ExitCode maps an error to istioctl's exit codes: 64 for a bad command line, 1 otherwise.
func ExitCode(err error) int {
	var usage *cmd.UsageError
	if errors.As(err, &usage) {
		return 64
	}
	var exit *cmd.ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	return 1
}
