package cmd

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// formatsAnnotation holds, on a -o flag that picks a format, the formats it offers: what
// checkOutput accepts and completion offers.
const formatsAnnotation = "istioctl/formats"

// DiffersAnnotation holds, on a flag of upstream's whose meaning ours does not keep, what ours
// does instead: the warning printed when it is used (docs/conformance.md, "CLI differences").
const DiffersAnnotation = "istioctl/differs"

// differs marks upstream's flag name on fs as one whose meaning ours does not keep: it is
// accepted, and using it prints instead (see warnDiffering).
func differs(fs *pflag.FlagSet, name, instead string) {
	_ = fs.SetAnnotation(name, DiffersAnnotation, []string{instead})
}

// warnDiffering prints, on errOut, the warning of each flag given that ours does not take as
// upstream does.
func warnDiffering(c *cobra.Command) {
	warn := printer.Warnings(c.ErrOrStderr())
	c.Flags().Visit(func(f *pflag.Flag) {
		if instead := f.Annotations[DiffersAnnotation]; len(instead) > 0 {
			warn("--" + f.Name + ": " + instead[0])
		}
	})
}

// outputFlag adds -o picking one of formats (its default the first): what the output is,
// and a note after the formats' names.
func outputFlag(fs *pflag.FlagSet, p *string, formats printer.Formats, what, note string) {
	fs.StringVarP(p, "output", "o", string(formats.Default()), what+": "+formats.Help()+note)
	_ = fs.SetAnnotation("output", formatsAnnotation, formats.Names())
}

// offeredFormats are the formats a command's -o offers; nil when its -o is no format (a
// path) or it has none.
func offeredFormats(c *cobra.Command) printer.Formats {
	f := c.Flags().Lookup("output")
	if f == nil {
		return nil
	}
	var out printer.Formats
	for _, n := range f.Annotations[formatsAnnotation] {
		out = append(out, printer.Format(n))
	}
	return out
}

// checkOutput says, before the command runs, whether its -o is one of the formats it offers;
// an empty one becomes the default.
func checkOutput(c *cobra.Command) error {
	formats := offeredFormats(c)
	if formats == nil {
		return nil
	}
	f := c.Flags().Lookup("output")
	// -o "" is the default, as upstream's version takes it (scripts pass it through).
	if f.Value.String() == "" {
		return f.Value.Set(string(formats.Default()))
	}
	if err := formats.Check(printer.Format(f.Value.String())); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}
