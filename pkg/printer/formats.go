package printer

import (
	"fmt"
	"slices"
	"strings"
)

// Format names an output format (-o).
type Format string

// The formats.
const (
	Text  Format = "text"
	JSON  Format = "json"
	YAML  Format = "yaml"
	JUnit Format = "junit"
	// Table is the tabular format of listings.
	Table Format = "table"
	// The kubectl formats of the listings (tag list, history), besides table, json and
	// yaml: the last two take their template after "=".
	Name          Format = "name"
	JSONPath      Format = "jsonpath="
	CustomColumns Format = "custom-columns="
	// Flags is profile dump's --set lines.
	Flags Format = "flags"
)

// Formats are what a command's -o offers, its default first: read by the flag's help, its
// check and its completion.
type Formats []Format

// The format sets of the commands.
var (
	// EventFormats: a run's progress, one event per line with json, a document per event
	// with yaml.
	EventFormats = Formats{Text, JSON, YAML}
	// ReportFormats: a check report.
	ReportFormats = Formats{Text, JSON, YAML, JUnit}
	// ListFormats: a listing, as kubectl's printers take them.
	ListFormats = Formats{Table, JSON, YAML, Name, JSONPath, CustomColumns}
	// DocumentFormats: a document printed as text or encoded.
	DocumentFormats = Formats{Text, JSON, YAML}
	// DumpFormats: a document that is YAML unless asked (fleet dump).
	DumpFormats = Formats{YAML, JSON}
	// ProfileDumpFormats: profile dump's.
	ProfileDumpFormats = Formats{YAML, JSON, Flags}
)

// Default is the format a command prints without -o.
func (fs Formats) Default() Format { return fs[0] }

// Names are the formats as -o takes them, for completion.
func (fs Formats) Names() []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

// Help words the formats for the flag's help: "text, json or yaml".
func (fs Formats) Help() string {
	words := make([]string, len(fs))
	for i, f := range fs {
		words[i] = string(f)
		switch f {
		case JSONPath:
			words[i] += "TEMPLATE"
		case CustomColumns:
			words[i] += "HEADER:PATH,..."
		}
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Check says whether f is one of fs, with a usable template for the kubectl formats, before
// the command asks the cluster anything.
func (fs Formats) Check(f Format) error {
	for _, t := range []Format{JSONPath, CustomColumns} {
		if slices.Contains(fs, t) && strings.HasPrefix(string(f), string(t)) {
			_, err := kubectlPrinter(f)
			return err
		}
	}
	if slices.Contains(fs, f) {
		return nil
	}
	return fs.unsupported(f)
}

func (fs Formats) unsupported(f Format) error {
	return fmt.Errorf("--output %q is not supported; use one of %s", f, strings.Join(fs.Names(), ", "))
}
