package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// built holds the binaries built, one per version and test binary.
var built sync.Map

type build struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// BuildIstioctl builds cmd/istioctl as make build does (CGO_ENABLED=0, -trimpath), once per
// version and test binary, and returns its path. A version stamps the binary as make build
// VERSION=... does: our build stamps its own version into what it installs, so an older
// "from" side is this tree built as that version. An empty version builds with none
// stamped, as go build does: a real process for signals and a terminal. The binaries stay
// in the temporary directory until the machine's clean-up (no test owns them).
func BuildIstioctl(t testing.TB, version string) string {
	t.Helper()
	v, _ := built.LoadOrStore(version, &build{})
	b := v.(*build)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "istioctl-"+version+"-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, "istioctl")
		args := []string{"build", "-trimpath", "-o", b.bin}
		if version != "" {
			args = append(args, "-ldflags", ldflags(version))
		}
		c := exec.Command("go", append(args, "github.com/istioctl-installer/istioctl/cmd/istioctl")...)
		c.Env = append(os.Environ(), "CGO_ENABLED=0")
		b.out, b.err = c.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("building istioctl %s: %v\n%s", version, b.err, b.out)
	}
	return b.bin
}

// At is x running this tree built as version (BuildIstioctl).
func (x Istioctl) At(version string) Istioctl {
	x.T.Helper()
	x.Bin = BuildIstioctl(x.T, version)
	return x
}

// ldflags are make build's: the version, the commit and whether the tree was modified.
func ldflags(version string) string {
	const pkg = "github.com/istioctl-installer/istioctl/pkg/version"
	rev, status := "unknown", "Modified"
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		rev = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "status", "--porcelain").Output(); err == nil && len(out) == 0 {
		status = "Clean"
	}
	return "-X " + pkg + ".Version=" + version + " -X " + pkg + ".GitRevision=" + rev + " -X " + pkg + ".BuildStatus=" + status
}
