package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
// version and test binary (once per version for the whole run under hack/test.sh:
// buildShared), and returns its path. A version stamps the binary as make build
// VERSION=... does: our build stamps its own version into what it installs, so an older
// "from" side is this tree built as that version. An empty version builds with none
// stamped, as go build does: a real process for signals and a terminal. The binaries stay
// in the temporary directory until the machine's clean-up (no test owns them).
func BuildIstioctl(t testing.TB, version string) string {
	t.Helper()
	v, _ := built.LoadOrStore(version, &build{})
	b := v.(*build)
	b.once.Do(func() {
		if shared := os.Getenv("ISTIOCTL_TEST_BUILDS"); shared != "" {
			b.bin, b.out, b.err = buildShared(shared, version)
			return
		}
		dir, err := os.MkdirTemp("", "istioctl-"+version+"-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, "istioctl")
		b.out, b.err = goBuild(b.bin, version)
	})
	if b.err != nil {
		t.Fatalf("building istioctl %s: %v\n%s", version, b.err, b.out)
	}
	return b.bin
}

// goBuild builds cmd/istioctl at bin, stamped with version unless empty.
func goBuild(bin, version string) ([]byte, error) {
	args := []string{"build", "-trimpath", "-o", bin}
	if version != "" {
		args = append(args, "-ldflags", ldflags(version))
	}
	c := exec.Command("go", append(args, "github.com/istioctl-installer/istioctl/cmd/istioctl")...)
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	return c.CombinedOutput()
}

// buildShared builds version once for every test binary of a run (hack/test.sh sets
// ISTIOCTL_TEST_BUILDS to a directory of the run's own: the tree cannot change under it):
// the first to take the directory's lock builds, the others wait and take its binary.
func buildShared(dir, version string) (string, []byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	name := "istioctl"
	if version != "" {
		name += "-" + version
	}
	bin := filepath.Join(dir, name)
	lock, err := os.OpenFile(bin+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil, nil
	}
	// Built aside and renamed: a binary at bin is always whole.
	out, err := goBuild(bin+".tmp", version)
	if err != nil {
		return "", out, err
	}
	return bin, out, os.Rename(bin+".tmp", bin)
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
