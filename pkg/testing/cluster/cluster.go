// Package cluster gives end-to-end tests a real Kubernetes control plane: the one named by
// ISTIOCTL_TEST_KUBECONFIG (make test starts one and sets it), or else one started for the
// test binary with hack/kube/up.sh and stopped by Main. A cluster that cannot start fails
// the test with the failing component's log; it never skips.
package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// EnvKubeconfig names the variable that points tests at an already running cluster.
const EnvKubeconfig = "ISTIOCTL_TEST_KUBECONFIG"

// Cluster is a running control plane.
type Cluster struct {
	// Kubeconfig is the path of an admin kubeconfig for it; Context is its current context
	// (istioctl-local, or cluster-i for cluster i of a bed).
	Kubeconfig string
	Context    string
	Config     *rest.Config
	Kube       kubernetes.Interface
	Dynamic    dynamic.Interface
	// state is the up.sh state directory when this binary started the cluster.
	state string
	root  string
	// killedArgs are the command lines of the components KillComponent killed; started the
	// processes RestartComponent started.
	killedArgs map[string][]string
	started    map[string]proc
}

var (
	once    sync.Once
	shared  *Cluster
	openErr error
)

// Main runs the tests and stops a cluster this binary started. Use it as TestMain.
func Main(m *testing.M) {
	code := m.Run()
	var errs []error
	if shared != nil && shared.state != "" {
		errs = append(errs, shared.stop())
	}
	errs = append(errs, stopSharedBed())
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// Get returns the cluster of this test binary, starting it on first use.
func Get(t testing.TB) *Cluster {
	t.Helper()
	declare(t, needShared)
	once.Do(func() { shared, openErr = open() })
	if openErr != nil {
		t.Fatalf("local Kubernetes control plane: %v", openErr)
	}
	shared.gate(t)
	shared.watch(t)
	return shared
}

func open() (*Cluster, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	c := &Cluster{root: root, Kubeconfig: os.Getenv(EnvKubeconfig)}
	if c.Kubeconfig == "" {
		dir, err := os.MkdirTemp("", "istioctl-e2e-cluster-")
		if err != nil {
			return nil, err
		}
		c.state = filepath.Join(dir, "state")
		if err := c.start(); err != nil {
			return nil, err
		}
		c.Kubeconfig = filepath.Join(c.state, "kubeconfig")
	}
	if err := c.connect(); err != nil {
		return nil, err
	}
	return c, nil
}

// connect builds the clients from c.Kubeconfig.
func (c *Cluster) connect() error {
	raw, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", c.Kubeconfig, err)
	}
	c.Context = raw.CurrentContext
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", c.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	c.Config = cfg
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	c.Dynamic, err = dynamic.NewForConfig(cfg)
	return err
}

// start runs up.sh for c.state; env (KEY=value) adds to or overrides its environment.
func (c *Cluster) start(env ...string) error {
	cmd := exec.Command(filepath.Join(c.root, "hack/kube/up.sh"))
	cmd.Env = append(os.Environ(), "STATE="+c.state, fmt.Sprintf("CLUSTER_OWNER_PID=%d", os.Getpid()))
	if os.Getenv(EnvRealIstiod) == "0" {
		cmd.Env = append(cmd.Env, "REAL_ISTIOD=0")
	}
	cmd.Env = append(cmd.Env, env...) // exec uses the last value of a repeated key
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/kube/up.sh failed (%v):\n%s", err, out.String())
	}
	return nil
}

// stop stops a cluster this binary started and removes the temporary directory holding
// its state.
func (c *Cluster) stop() error {
	if err := c.down(); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Dir(c.state))
}

// down stops the cluster with down.sh, which removes its state (nothing to do when it
// never started).
func (c *Cluster) down() error {
	cmd := exec.Command(filepath.Join(c.root, "hack/kube/down.sh"))
	cmd.Env = append(os.Environ(), "STATE="+c.state)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hack/kube/down.sh failed (%v):\n%s", err, out)
	}
	return nil
}

// repoRoot walks up from the working directory (a package directory under go test) to
// the directory holding hack/kube/up.sh.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack/kube/up.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("hack/kube/up.sh not found above the working directory")
		}
		dir = parent
	}
}

// Bin is the path of a tool in the repository's bin/ (kubectl, helm); the test fails when
// it is missing, naming what builds it (make test builds them all first).
func Bin(t testing.TB, name string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing (%v): run hack/kube/build.sh, as make test does", p, err)
	}
	return p
}

// Namespace creates a namespace with a name derived from the test's and deletes it when the
// test ends.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	base := strings.ToLower(t.Name())
	base = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, base)
	if len(base) > 40 {
		base = base[:40]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: strings.Trim(base, "-") + "-",
		Labels:       map[string]string{"istioctl.test/e2e": "true"},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a test namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := c.Kube.CoreV1().Namespaces().Delete(ctx, created.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting test namespace %s: %v", created.Name, err)
		}
	})
	return created.Name
}

// LogTail returns the last lines of a component's log when this binary started the
// cluster (for failure messages), or a note saying where the logs are.
func (c *Cluster) LogTail(component string, lines int) string {
	if c.state == "" {
		return fmt.Sprintf("(cluster started outside this test binary; see its state directory for %s.log)", component)
	}
	b, err := os.ReadFile(filepath.Join(c.state, "logs", component+".log"))
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
