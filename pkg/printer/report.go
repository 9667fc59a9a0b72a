package printer

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/check"
)

// ReportOptions tune the text report.
type ReportOptions struct {
	// Short prints a section whose checks all passed as one line (how many), and a
	// failing section's failures in full with a line for the rest: precheck without -v.
	Short bool
}

// Report prints a check report in format f.
func Report(w io.Writer, rep *check.Report, f Format, opts ...ReportOptions) error {
	var o ReportOptions
	for _, x := range opts {
		o.Short = o.Short || x.Short
	}
	switch f {
	case JSON, YAML:
		return encode(w, f, rep, encoding{})
	case JUnit:
		return junit(w, rep)
	}
	return text(w, rep, o.Short)
}

// text prints one section after another, failures first inside each, then the summary.
func text(w io.Writer, rep *check.Report, short bool) error {
	var sections []string
	by := map[string][]check.Result{}
	for _, r := range rep.Results {
		if _, ok := by[r.Section]; !ok {
			sections = append(sections, r.Section)
		}
		by[r.Section] = append(by[r.Section], r)
	}
	// blank: a blank line goes before what prints next (a full section stands apart).
	blank := false
	for i, s := range sections {
		passed, notes := 0, 0
		for _, r := range by[s] {
			switch {
			case r.Passed:
				passed++
			case r.Note():
				notes++
			}
		}
		// A section with nothing failed is a line, its notes under it.
		if short && passed+notes == len(by[s]) {
			if blank {
				fmt.Fprintln(w)
				blank = false
			}
			fmt.Fprintf(w, "%s %s: %s passed\n", green("✔"), s, checks(passed))
			for _, r := range by[s] {
				if r.Note() {
					result(w, r)
				}
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, s)
		fmt.Fprintln(w, strings.Repeat("-", len(s)))
		for _, r := range by[s] {
			if short && r.Passed {
				continue
			}
			result(w, r)
		}
		if short && passed > 0 {
			fmt.Fprintf(w, "%s %s passed\n", green("✔"), checks(passed))
		}
		blank = short
	}
	what := "subjects checked"
	if rep.Kind == check.KindVerify && !rep.Fleet {
		what = "objects checked"
	}
	notes := ""
	switch n := rep.Summary.Notes; {
	case n == 1:
		notes = ", 1 note"
	case n > 1:
		notes = fmt.Sprintf(", %d notes", n)
	}
	fmt.Fprintf(w, "\n%d %s, %d failed (%d errors, %d warnings%s)\n",
		rep.Summary.Checked, what, rep.Summary.Failed, rep.Summary.Errors, rep.Summary.Warnings, notes)
	return nil
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junit writes one testsuite per section and one testcase per result. Errors and warnings
// are failures only when they failed; their type says the severity. A note passes, its
// text in the case's output: a CI job's test report must not go red on one.
func junit(w io.Writer, rep *check.Report) error {
	out := junitSuites{Name: "istioctl " + rep.Command}
	index := map[string]int{}
	for _, r := range rep.Results {
		i, ok := index[r.Section]
		if !ok {
			i = len(out.Suites)
			index[r.Section] = i
			out.Suites = append(out.Suites, junitSuite{Name: r.Section})
		}
		c := junitCase{Name: r.Object, ClassName: r.Check, SystemOut: r.Message}
		switch {
		case r.Note():
			c.SystemOut = "note: " + r.Message
			if r.Hint != "" {
				c.SystemOut += "\nhint: " + r.Hint
			}
		case !r.Passed:
			text := r.Message
			if r.Diff != "" {
				text += "\n" + r.Diff
			}
			if r.Hint != "" {
				text += "\nhint: " + r.Hint
			}
			msg := r.Message
			if r.Code != "" {
				msg = "[" + r.Code + "] " + msg
			}
			c.Failure = &junitFailure{Message: msg, Type: string(r.Severity), Text: text}
			out.Suites[i].Failures++
			out.Failures++
		}
		out.Suites[i].Cases = append(out.Suites[i].Cases, c)
		out.Suites[i].Tests++
		out.Tests++
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// result prints one check's result: its mark, object and message, then its diff and hint.
func result(w io.Writer, r check.Result) {
	mark := green("✔")
	switch {
	case r.Passed:
	case r.Severity == check.Error:
		mark = red("✘")
	case r.Note():
		mark = cyan("i")
	default:
		mark = yellow("!")
	}
	code := ""
	if r.Code != "" && !r.Passed {
		code = "[" + r.Code + "] "
	}
	fmt.Fprintf(w, "%s %s%s: %s\n", mark, code, r.Object, r.Message)
	if r.Diff != "" {
		for _, l := range strings.Split(r.Diff, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	if r.Hint != "" && !r.Passed {
		fmt.Fprintf(w, "    hint: %s\n", r.Hint)
	}
}

// checks counts checks in words: "1 check", "3 checks".
func checks(n int) string {
	if n == 1 {
		return "1 check"
	}
	return fmt.Sprintf("%d checks", n)
}

// Verdict closes a check report: on failure a pointer to the ✘ lines on errOut, otherwise
// the all-clear of the report's kind on out; text only (the other formats carry the
// summary).
func Verdict(out, errOut io.Writer, rep *check.Report, failed bool, f Format) {
	if f != Text {
		return
	}
	switch {
	case failed:
		fmt.Fprintf(errOut, "%s found problems: see the ✘ lines above\n", rep.Command)
	case rep.Kind == check.KindVerify && !rep.Fleet:
		fmt.Fprintln(out, "✔ Istio is installed and verified successfully")
	case rep.Kind == check.KindVerify:
		fmt.Fprintln(out, "✔ Every cluster of the fleet is installed, verified and linked")
	case rep.Fleet:
		fmt.Fprintln(out, "✔ No issues found when checking the clusters of the fleet. The fleet is safe to install!")
	default:
		fmt.Fprintln(out, "✔ No issues found when checking the cluster. Istio is safe to install or upgrade!")
	}
}
