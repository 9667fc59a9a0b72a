package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/fingerprint"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// Result is what one tool did with a case.
type Result struct {
	Accepted bool
	// Error is the first line of the error a rejecting tool printed.
	Error string
	// Objects are the fingerprints (with digests) of what an accepting tool rendered.
	Objects map[string]fingerprint.Object
	// Normalised are the whole objects (fingerprint.Normalise), kept for a live run's
	// field-by-field report; nil for a recorded result.
	Normalised map[string]map[string]any
	// Deprecations are the settings (v1alpha1.Deprecations rows) the tool warned are
	// deprecated; Unlisted the deprecation warnings no row names.
	Deprecations []string `json:",omitempty"`
	Unlisted     []string `json:",omitempty"`
}

// withDeprecations fills in the deprecation warnings found in a tool's output (upstream's
// log lines, our "! warning:" lines).
func withDeprecations(r Result, output string) Result {
	seen := map[string]bool{}
	for _, line := range strings.Split(output, "\n") {
		if !strings.Contains(line, "deprecated") {
			continue
		}
		found := v1alpha1.DeprecationsIn(line)
		if len(found) == 0 {
			r.Unlisted = append(r.Unlisted, strings.TrimSpace(line))
		}
		for _, d := range found {
			if !seen[d] {
				seen[d] = true
				r.Deprecations = append(r.Deprecations, d)
			}
		}
	}
	sort.Strings(r.Deprecations)
	return r
}

// Upstream's images come from its own default hub and tag (registry.istio.io/testing,
// latest) in an unstamped build; a release build lays its compiled-in hub and tag over the
// profile, below the user's files. This file, given to upstream before the case's own
// arguments, does the same with ours (docker.io/istio and the version line), so the images
// compare and a case's own hub or tag still wins.
var upstreamHubTag = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  hub: docker.io/istio
  tag: ` + version.Version + "\n"

// runUpstream runs upstream istioctl on the case in a fresh directory, offline: HOME is
// empty and KUBECONFIG names no file.
func runUpstream(ctx context.Context, bin string, c Case) (Result, error) {
	dir, err := os.MkdirTemp("", "conformance-upstream-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	if err := c.Prepare(dir); err != nil {
		return Result{}, err
	}
	hubTag := filepath.Join(dir, ".hub-tag.yaml")
	if err := os.WriteFile(hubTag, []byte(upstreamHubTag), 0o644); err != nil {
		return Result{}, err
	}
	home := filepath.Join(dir, ".home")
	if err := os.Mkdir(home, 0o755); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	args := append([]string{"manifest", "generate", "-f", hubTag}, c.Args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "KUBECONFIG=/nonexistent", "PATH=/usr/bin:/bin"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("upstream istioctl on %s: %w", c.ID, ctx.Err())
	}
	if runErr != nil {
		if _, ok := runErr.(*exec.ExitError); !ok {
			return Result{}, fmt.Errorf("running upstream istioctl: %w", runErr)
		}
		return withDeprecations(Result{Error: firstError(errOut.String(), runErr)}, logs(out.Bytes())+errOut.String()), nil
	}
	r, err := parsed(withoutLogs(out.Bytes()))
	if err != nil {
		return Result{}, fmt.Errorf("upstream istioctl on %s: %w", c.ID, err)
	}
	return withDeprecations(r, logs(out.Bytes())+errOut.String()), nil
}

// runOurs runs our manifest generate in this process, with dir (made by the caller, holding
// the case's files) as the working directory: the command line, flag parsing included, is
// the one bin/istioctl runs.
func runOurs(ctx context.Context, c Case, dir string) (Result, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Result{}, err
	}
	if err := os.Chdir(dir); err != nil {
		return Result{}, err
	}
	defer os.Chdir(wd) //nolint:errcheck // back to where we were; nothing else to do on failure
	var out, errOut bytes.Buffer
	root := cmd.NewRootCommand(cmd.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(append([]string{"manifest", "generate"}, c.Args...))
	if err := root.ExecuteContext(ctx); err != nil {
		return withDeprecations(Result{Error: firstError("Error: "+err.Error(), err)}, errOut.String()), nil
	}
	r, err := parsed(out.Bytes())
	if err != nil {
		return Result{}, fmt.Errorf("ours on %s: %w", c.ID, err)
	}
	return withDeprecations(r, errOut.String()), nil
}

// Upstream's logger writes to standard output, in the manifest: a line
// "2026-12-02T00:11:54.005629Z\twarn\t..." and its tab-indented continuation lines.
var logLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z\t[a-z]+\t`)

// logs are the log lines (and their continuation lines) of upstream's standard output.
func logs(manifest []byte) string {
	var out []string
	inLog := false
	for _, l := range strings.SplitAfter(string(manifest), "\n") {
		switch {
		case logLine.MatchString(l):
			inLog = true
		case inLog && strings.HasPrefix(l, "\t"):
		default:
			inLog = false
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

func withoutLogs(manifest []byte) []byte {
	var out [][]byte
	inLog := false
	for _, l := range bytes.SplitAfter(manifest, []byte("\n")) {
		switch {
		case logLine.Match(l):
			inLog = true
			continue
		case inLog && (bytes.HasPrefix(l, []byte("\t")) || len(bytes.TrimSpace(l)) == 0):
			continue
		}
		inLog = false
		out = append(out, l)
	}
	return bytes.Join(out, nil)
}

func parsed(manifest []byte) (Result, error) {
	objs, err := render.ParseObjects(manifest)
	if err != nil {
		return Result{}, fmt.Errorf("parsing the rendered manifest: %w", err)
	}
	r := Result{Accepted: true, Objects: fingerprint.Deep(objs), Normalised: map[string]map[string]any{}}
	for _, o := range objs {
		r.Normalised[fingerprint.Key(o)] = fingerprint.Normalise(o)
	}
	return r, nil
}

// firstError is the first line of stderr that says Error (or the first line at all).
func firstError(stderr string, err error) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "Error: ") {
			msg := strings.TrimPrefix(l, "Error: ")
			// a multi-line error (a list of problems) continues on the next lines
			for _, more := range lines[i+1:] {
				if strings.TrimSpace(more) == "" {
					break
				}
				msg += " " + strings.TrimSpace(more)
			}
			return clip(msg)
		}
	}
	if len(lines) > 0 && lines[0] != "" {
		return clip(lines[len(lines)-1])
	}
	return err.Error()
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:397] + "..."
	}
	return s
}
