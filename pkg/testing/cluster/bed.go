package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// EnvBed names the directory where make test keeps the shared bed's clusters, so that every
// test binary uses the same ones (started by the first that asks, stopped by make test).
// Without it each test binary starts its own and stops them in Main.
const EnvBed = "ISTIOCTL_TEST_BED"

// EnvBedOwner is the pid whose end stops the shared bed's clusters should make test die
// without stopping them (up.sh's watchdog); by default the test binary's own.
const EnvBedOwner = "ISTIOCTL_TEST_BED_OWNER"

// MaxBed is the most clusters a bed has (up.sh gives each a slice of 192.0.2.0/24).
const MaxBed = 8

// Bed is several control planes at once, for multi-cluster tests. Cluster i (from 1) has
// the context cluster-i, the service range 127.(63+i).0.0/16 and a fakelb giving each
// LoadBalancer Service an address from its own slice of 192.0.2.0/24 (status only: never
// dial one). Every cluster is separate: its own etcd, PKI, nodes and ports.
type Bed struct {
	// Kubeconfig holds every cluster's context (cluster-1 ... cluster-N); the current one
	// is cluster-1.
	Kubeconfig string
	Clusters   []*Cluster
}

type sharedBedState struct {
	dir     string
	owned   bool // this binary made dir, so Main stops the clusters and removes it
	owner   int
	members []*Cluster
}

var (
	bedMu     sync.Mutex
	sharedBed *sharedBedState
)

// GetBed returns clusters 1 to n of this test binary's bed (of make test's, under make
// test), starting the missing ones on first use, all at once. A test that asks for fewer
// than a previous one gets the first n. The clusters are shared like Get's: use namespaces
// of your own, and take StartPrivateBed to break a control plane on purpose.
func GetBed(t testing.TB, n int) *Bed {
	t.Helper()
	checkBedSize(t, n)
	declare(t, needBed)
	bedMu.Lock()
	defer bedMu.Unlock()
	if sharedBed == nil {
		s, err := openSharedBed()
		if err != nil {
			t.Fatalf("the shared test bed: %v", err)
		}
		sharedBed = s
	}
	if err := sharedBed.grow(n); err != nil {
		t.Fatalf("the shared test bed of %d clusters: %v", n, err)
	}
	for _, c := range sharedBed.members[:n] {
		c.gate(t)
		c.watch(t)
	}
	return newBed(t, sharedBed.members[:n])
}

// StartPrivateBed starts n clusters for this test alone, all at once, and stops them when
// the test ends (like StartPrivate, each can have its components killed).
func StartPrivateBed(t testing.TB, n int) *Bed {
	t.Helper()
	checkBedSize(t, n)
	declare(t, needPrivate)
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "istioctl-private-bed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stopBed(root, dir); err != nil {
			t.Errorf("stopping the private test bed: %v", err)
		}
	})
	members, err := startMembers(root, dir, 1, n, os.Getpid())
	if err != nil {
		t.Fatalf("private test bed of %d clusters: %v", n, err)
	}
	return newBed(t, members)
}

func checkBedSize(t testing.TB, n int) {
	t.Helper()
	if n < 1 || n > MaxBed {
		t.Fatalf("a test bed has 1 to %d clusters, not %d", MaxBed, n)
	}
}

func openSharedBed() (*sharedBedState, error) {
	s := &sharedBedState{dir: os.Getenv(EnvBed), owner: os.Getpid()}
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "istioctl-e2e-bed-")
		if err != nil {
			return nil, err
		}
		s.dir, s.owned = dir, true
		return s, nil
	}
	if v := os.Getenv(EnvBedOwner); v != "" {
		pid, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want a pid: %w", EnvBedOwner, v, err)
		}
		s.owner = pid
	}
	return s, os.MkdirAll(s.dir, 0o755)
}

// grow makes the bed at least n clusters. Under make test another test binary may have
// started some already (their state has an env file, written last by up.sh): those are
// reused. A lock on the directory keeps two binaries from starting the same one.
func (s *sharedBedState) grow(n int) error {
	if len(s.members) >= n {
		return nil
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", s.dir, err)
	}
	members, err := startMembers(root, s.dir, len(s.members)+1, n, s.owner)
	if err != nil {
		return err
	}
	s.members = append(s.members, members...)
	return nil
}

// startMembers opens clusters from..to of the bed in dir, starting (in parallel) those not
// already running there.
func startMembers(root, dir string, from, to, owner int) ([]*Cluster, error) {
	members := make([]*Cluster, to-from+1)
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i := range members {
		index := from + i
		c := &Cluster{root: root, state: filepath.Join(dir, fmt.Sprintf("cluster-%d", index))}
		c.Kubeconfig = filepath.Join(c.state, "kubeconfig")
		members[i] = c
		if _, err := os.Stat(filepath.Join(c.state, "env")); err == nil {
			continue
		}
		wg.Go(func() {
			// A start that failed half-way (in another binary) leaves state behind.
			if err := c.down(); err != nil {
				errs[i] = err
				return
			}
			if err := os.RemoveAll(c.state); err != nil {
				errs[i] = err
				return
			}
			if err := c.start(fmt.Sprintf("BED_INDEX=%d", index), fmt.Sprintf("CLUSTER_OWNER_PID=%d", owner)); err != nil {
				errs[i] = fmt.Errorf("cluster-%d: %w", index, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, c := range members {
		if err := c.connect(); err != nil {
			return nil, err
		}
	}
	return members, nil
}

// newBed writes a kubeconfig with the members' contexts for this test.
func newBed(t testing.TB, members []*Cluster) *Bed {
	t.Helper()
	paths := make([]string, len(members))
	for i, c := range members {
		paths[i] = c.Kubeconfig
	}
	merged, err := (&clientcmd.ClientConfigLoadingRules{Precedence: paths}).Load()
	if err != nil {
		t.Fatalf("merging the bed's kubeconfigs: %v", err)
	}
	merged.CurrentContext = members[0].Context
	b := &Bed{Kubeconfig: filepath.Join(t.TempDir(), "kubeconfig"), Clusters: members}
	if err := clientcmd.WriteToFile(*merged, b.Kubeconfig); err != nil {
		t.Fatalf("writing the bed's kubeconfig: %v", err)
	}
	return b
}

// stopBed stops every cluster in dir at once and removes dir (bed-down.sh).
func stopBed(root, dir string) error {
	cmd := exec.Command(filepath.Join(root, "hack/kube/bed-down.sh"))
	cmd.Env = append(os.Environ(), "STATE="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hack/kube/bed-down.sh failed (%v):\n%s", err, out)
	}
	return nil
}

// stopSharedBed stops the shared bed if this binary made it (Main).
func stopSharedBed() error {
	bedMu.Lock()
	defer bedMu.Unlock()
	if sharedBed == nil || !sharedBed.owned {
		return nil
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	return stopBed(root, sharedBed.dir)
}
