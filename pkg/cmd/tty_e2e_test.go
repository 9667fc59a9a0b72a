package cmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// demoComponents are the components the demo profile installs, as the view names them.
var demoComponents = []string{"Istio core", "Istiod", "Ingress gateways", "Egress gateways"}

// finalLine classifies what may stay on the screen after an install with -y: the summary
// (the counts in total and per component), one ✔ line per component, the result lines, and
// the shell's exit line. Anything else (an object line, a live line, a bar) is left over.
var finalLine = []*regexp.Regexp{
	regexp.MustCompile(`^Plan: \d+ to create, \d+ to update, \d+ unchanged, \d+ to prune$`),
	regexp.MustCompile(`^  (Istio core|Istiod|Ingress gateways|Egress gateways|Revision tags) +(\d+ (to create|to update|unchanged|to prune)(, )?)+$`),
	regexp.MustCompile(`^✔ (Istio core|Istiod|Ingress gateways|Egress gateways) installed \S+$`),
	regexp.MustCompile(`^✔ Default revision tag points at revision "default"$`),
	regexp.MustCompile(`^✔ Installation complete \(\d+ applied, \d+ unchanged(, \d+ pruned)?\)$`),
	regexp.MustCompile(`^\[exit \d+\]$`),
}

// leftovers are the lines of the pane no finalLine accepts.
func leftovers(lines []string) []string {
	var out []string
next:
	for _, l := range lines {
		if l == "" {
			continue
		}
		for _, re := range finalLine {
			if re.MatchString(l) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// exited waits for the nth "[exit N]" line (from 1) the pane's commands print last and
// returns its N.
func exited(t *testing.T, tm *harness.Terminal, nth int, timeout time.Duration) (int, string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\[exit (\d+)\]$`)
	screen := tm.WaitFor("exit line", timeout, func(s string) bool { return len(re.FindAllString(s, -1)) >= nth })
	code, err := strconv.Atoi(re.FindAllStringSubmatch(screen, -1)[nth-1][1])
	if err != nil {
		t.Fatal(err)
	}
	return code, screen
}

// prompted says the shell waits for a command: the pane ends with its prompt ($, or # for
// root).
func prompted(screen string) bool {
	return strings.HasSuffix(screen, "$") || strings.HasSuffix(screen, "#")
}

// checkFits fails when a line of the pane is wider than the window: tmux wrapped it, so the
// pane has more rows than lines written.
func checkFits(t *testing.T, tm *harness.Terminal, width int) {
	t.Helper()
	rows, lines := tm.Lines(false), tm.Lines(true)
	if len(rows) != len(lines) {
		var wide []string
		for _, l := range lines {
			if len([]rune(l)) > width {
				wide = append(wide, l)
			}
		}
		t.Errorf("at %d columns, %d lines took %d rows: lines wider than the window:\n%s\n\nthe rows:\n%s", width, len(lines), len(rows),
			strings.Join(wide, "\n"), strings.Join(rows, "\n"))
	}
}

// checkFinal fails unless the pane holds the summary, one ✔ line per demo component and the
// result, and nothing else, scrollback included.
func checkFinal(t *testing.T, tm *harness.Terminal, screen string) {
	t.Helper()
	if left := leftovers(tm.Lines(true)); len(left) > 0 {
		t.Errorf("lines left on the screen or in the scrollback besides the summary, a line per component and the result:\n%s\n\nthe pane:\n%s",
			strings.Join(left, "\n"), screen)
	}
	for _, c := range demoComponents {
		if n := strings.Count(screen, "✔ "+c+" installed"); n != 1 {
			t.Errorf("%d lines %q, want 1:\n%s", n, "✔ "+c+" installed", screen)
		}
	}
	if !strings.HasPrefix(screen, "Plan: ") || !strings.Contains(screen, "✔ Installation complete") {
		t.Errorf("the pane should start with the summary and end with the result:\n%s", screen)
	}
}

// TestTerminalViewE2E runs istioctl in a real terminal (tmux) as a person would: an install
// of demo at 80 and at 200 columns leaves the summary, one line per component and the
// result, no line wider than the window and nothing of the live lines or the bar in the
// scrollback; so does one whose window shrinks from 200 to 80 columns while it runs; a
// failing one shows the whole failure report. Then a shell: `istioctl install --set
// profile=demo` shows the summary and asks; n writes nothing, y installs.
func TestTerminalViewE2E(t *testing.T) {
	c := cluster.Get(t)
	bin := harness.BuildIstioctl(t, "")
	home := t.TempDir()
	istioctl := harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.MustRun
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	env := []string{"HOME=" + home, "KUBECONFIG=" + c.Kubeconfig}
	// command runs istioctl with args in the pane, then prints its exit code.
	command := func(args string) string {
		return fmt.Sprintf("%s %s; echo \"[exit $?]\"; exec sleep 3600", bin, args)
	}

	for _, tc := range []struct {
		width int
		color bool
	}{{80, false}, {200, true}} {
		t.Run(fmt.Sprintf("%d columns", tc.width), func(t *testing.T) {
			istioctl("uninstall", "--purge", "-y")
			e := env
			if !tc.color {
				e = append(e, "NO_COLOR=1")
			}
			tm := harness.NewTerminal(t, tc.width, 40, e, command("install --set profile=demo -y"))
			code, screen := exited(t, tm, 1, 3*time.Minute)
			if code != 0 {
				t.Fatalf("install exited %d:\n%s", code, screen)
			}
			checkFinal(t, tm, screen)
			checkFits(t, tm, tc.width)
			if got := tm.Coloured(); got != tc.color {
				t.Errorf("colours on the terminal: %v, want %v (NO_COLOR set: %v)", got, tc.color, !tc.color)
			}
		})
	}

	t.Run("resized from 200 to 80 columns", func(t *testing.T) {
		istioctl("uninstall", "--purge", "-y")
		tm := harness.NewTerminal(t, 200, 40, env, command("install --set profile=demo -y"))
		// Mid-install: a component's live line is on the screen.
		live := regexp.MustCompile(`(?m)^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] .*: \d+/\d+ ready`)
		tm.WaitFor("live line", time.Minute, live.MatchString)
		tm.Resize(80, 40)
		code, screen := exited(t, tm, 1, 3*time.Minute)
		if code != 0 {
			t.Fatalf("install exited %d:\n%s", code, screen)
		}
		checkFinal(t, tm, screen)
		checkFits(t, tm, 80)
	})

	t.Run("a failing install", func(t *testing.T) {
		istioctl("uninstall", "--purge", "-y")
		tm := harness.NewTerminal(t, 80, 40, append(env, "NO_COLOR=1"), command(
			"install --set profile=demo -y --readiness-timeout 20s --set components.pilot.k8s.nodeSelector.no-such-node=x"))
		code, screen := exited(t, tm, 1, 3*time.Minute)
		if code == 0 {
			t.Fatalf("an install whose istiod cannot be scheduled succeeded:\n%s", screen)
		}
		// The report as the plain view prints it: every line of it, wrapped by the
		// terminal, not cut.
		for _, want := range []string{"✘ Istiod failed: not ready within the readiness timeout (20s)",
			"Istiod: not ready within the readiness timeout (20s):", "Deployment/istio-system/istiod (0 of 1 replicas",
			"✘ Ingress gateways not applied: the readiness deadline passed while waiting for Pilot",
			"didn't match Pod's node affinity/selector", "allow more time with --readiness-timeout", "✘ Installation failed"} {
			if !strings.Contains(screen, want) {
				t.Errorf("the failure report lacks %q:\n%s", want, screen)
			}
		}
		for _, l := range tm.Lines(true) {
			if strings.ContainsAny(l, "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏█") || strings.Contains(l, "- Applying") {
				t.Errorf("a live line, the bar or an object line was left in the scrollback: %q\n%s", l, screen)
			}
		}
	})

	t.Run("asks with the summary", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(dir, "istioctl")); err != nil {
			t.Fatal(err)
		}
		tm := harness.NewTerminal(t, 120, 40, append(env, "NO_COLOR=1", "PATH="+dir+":"+os.Getenv("PATH")), "sh")
		tm.WaitFor("prompt", 10*time.Second, prompted)

		// After the failed install above, istiod's Deployment differs from demo's and the
		// gateways are missing.
		before, writes := harness.ObjectVersions(t, c), harness.AuditWrites(t, c)
		tm.Keys("istioctl install --set profile=demo")
		screen := tm.WaitFor("question", time.Minute, func(s string) bool { return strings.HasSuffix(s, "Proceed? (y/N)") })
		// The gateways the failed install skipped are to create; istiod is to update.
		for _, want := range []string{`(?m)^Plan: [1-9]\d* to create, [1-9]\d* to update, \d+ unchanged, 0 to prune$`, `(?m)^  Istiod +.*\d+ to update`,
			`(?m)^  Egress gateways +\d+ to create$`, `(?m)^    ~ Deployment/istio-system/istiod: .*spec\.template\.spec\.nodeSelector`} {
			if !regexp.MustCompile(want).MatchString(screen) {
				t.Errorf("the summary before the question lacks %s:\n%s", want, screen)
			}
		}
		tm.Keys("n")
		tm.WaitFor("answer", time.Minute, prompted)
		tm.Keys(`echo "[exit $?]"`)
		code, screen := exited(t, tm, 1, time.Minute)
		if code != 1 || !strings.Contains(screen, "Cancelled.") {
			t.Errorf("answered n: exit %d, want 1 and Cancelled.:\n%s", code, screen)
		}
		if w := harness.WritesBetween(writes, harness.AuditWrites(t, c)); len(w) > 0 {
			t.Errorf("answering n sent write requests: %v", w)
		}
		if diffs := harness.VersionsDiff(before, harness.ObjectVersions(t, c)); len(diffs) > 0 {
			t.Errorf("answering n changed the cluster:\n  %s", strings.Join(diffs, "\n  "))
		}

		tm.Keys("istioctl install --set profile=demo")
		tm.WaitFor("question", time.Minute, func(s string) bool { return strings.HasSuffix(s, "Proceed? (y/N)") })
		tm.Keys("y")
		tm.WaitFor("result", 3*time.Minute, prompted)
		tm.Keys(`echo "[exit $?]"`)
		code, screen = exited(t, tm, 2, 3*time.Minute)
		if code != 0 || !strings.Contains(screen, "✔ Installation complete") {
			t.Errorf("answered y: exit %d, want 0 and installed:\n%s", code, screen)
		}
		istioctl("verify-install", "--set", "profile=demo")
	})
}
