package cmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// isTerminalFile says whether w is a terminal.
func isTerminalFile(w any) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// eventSink prints a run's events in format to out: with a progress bar when out is a
// terminal, plain lines otherwise.
func eventSink(out io.Writer, format string) event.Sink {
	if isTerminalFile(out) {
		return printer.NewTerminalEvents(out, printer.Format(format))
	}
	return printer.NewEvents(out, printer.Format(format))
}

// confirm asks question on a terminal; without one it is a usage error asking for -y.
func confirm(in io.Reader, out io.Writer, isTerminal func() bool, question string) error {
	if isTerminal == nil {
		isTerminal = func() bool { return isTerminalFile(in) }
	}
	if !isTerminal() {
		return Usagef("standard input is not a terminal, so istioctl cannot ask for confirmation: pass -y (--skip-confirmation)")
	}
	fmt.Fprint(out, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		fmt.Fprintln(out, "Cancelled.")
		return &ExitError{Code: 1}
	}
	return nil
}
