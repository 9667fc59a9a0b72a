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

// eventSink prints a run's events in format to out: the live view when out is a terminal
// (object lines only with verbose), plain lines otherwise. planShown says the command
// prints the plan's summary before the run.
func eventSink(out io.Writer, format string, verbose, planShown bool) event.Sink {
	shown := printer.EventOptions{PlanShown: planShown, Objects: verbose}
	if isTerminalFile(out) {
		return printer.NewTerminalEvents(out, printer.Format(format), printer.TerminalOptions{EventOptions: shown, Verbose: verbose})
	}
	return printer.NewEvents(out, printer.Format(format), shown)
}

// needTerminal is the usage error of a prompt without a terminal to ask on.
func needTerminal(in io.Reader, isTerminal func() bool) error {
	if isTerminal == nil {
		isTerminal = func() bool { return isTerminalFile(in) }
	}
	if !isTerminal() {
		return Usagef("standard input is not a terminal, so istioctl cannot ask for confirmation: pass -y (--skip-confirmation)")
	}
	return nil
}

// confirm asks question on a terminal; without one it is a usage error asking for -y.
func confirm(in io.Reader, out io.Writer, isTerminal func() bool, question string) error {
	if err := needTerminal(in, isTerminal); err != nil {
		return err
	}
	fmt.Fprint(out, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		fmt.Fprintln(out, "Cancelled.")
		return &ExitError{Code: 1}
	}
	return nil
}
