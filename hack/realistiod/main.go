// Command realistiod runs a real istiod in the local test bed: for every istiod pod (a
// container named "discovery") that an install creates, it runs the bed's pilot-discovery
// binary on this host as the pod's container, the way a kubelet would.
//
//   - The process gets the container's args and environment (valueFrom resolved), its
//     volumes (Secrets, ConfigMaps, projected tokens) as files under a directory standing for
//     the container's root, and a kubeconfig holding a token of the pod's ServiceAccount
//     (TokenRequest), never the bed's admin credentials: the chart's RBAC is what it gets.
//   - Its listeners are moved onto free loopback ports; each Service selecting the pod is
//     carried from its cluster IP and port (the bed's service range is loopback) to them,
//     so the apiserver reaches the webhooks as it would in a cluster.
//   - The pod is Ready only while the process answers its readiness probe; kwok starts such
//     pods not ready (see `realistiod stages`). An exit shows as a restart with back-off.
//   - kwok's Logs and PortForward objects make `kubectl logs` and port-forward reach it.
//   - One process per pod, as a kubelet runs one container: a rollout runs the new pod's
//     beside the old one's until the old pod goes. A deleted pod is held (a finalizer)
//     until its process has stopped.
//
// Pods labelled istioctl.test/real-istiod=off are left to kwok. Everything binds loopback
// addresses only, and the only server dialled is the bed's apiserver (and what istiod's own
// configuration names, which in the bed is loopback too).
//
//	realistiod -kubeconfig $STATE/kubeconfig -binary bin/pilot-discovery -state $STATE/realistiod -ready-file F
//	realistiod stages kwok-stages.yaml >$STATE/kwok-stages.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/istioctl-installer/istioctl/hack/internal/loopback"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "stages" {
		if err := stages(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "realistiod stages:", err)
			os.Exit(1)
		}
		return
	}
	kubeconfig := flag.String("kubeconfig", "", "admin kubeconfig of the local cluster")
	binary := flag.String("binary", "", "the pilot-discovery binary to run")
	state := flag.String("state", "", "directory for the processes' files and logs")
	readyFile := flag.String("ready-file", "", "file to create once the caches are synced")
	ports := flag.String("ports", "", "FIRST-LAST: the loopback ports istiods listen on (default: any the kernel gives)")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *kubeconfig, *binary, *state, *readyFile, *ports); err != nil {
		fmt.Fprintln(os.Stderr, "realistiod:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, binary, state, readyFile, portRange string) error {
	if binary == "" || state == "" {
		return fmt.Errorf("-binary and -state are required")
	}
	pool, err := parsePortRange(portRange)
	if err != nil {
		return err
	}
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("the pilot-discovery binary: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %q: %w", kubeconfig, err)
	}
	if err := loopback.APIServer(cfg.Host); err != nil {
		return err
	}
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	// The processes' kubeconfigs name the apiserver's CA by file.
	caFile := filepath.Join(state, "ca.crt")
	ca := cfg.TLSClientConfig.CAData
	if len(ca) == 0 && cfg.TLSClientConfig.CAFile != "" {
		if ca, err = os.ReadFile(cfg.TLSClientConfig.CAFile); err != nil {
			return err
		}
	}
	if err := os.WriteFile(caFile, ca, 0o644); err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c, f, err := newController(client, dyn, cfg, binary, state)
	if err != nil {
		return err
	}
	c.caFile, c.ports = caFile, pool
	f.Start(ctx.Done())
	return c.run(ctx, func() error {
		log.Printf("running istiod for the pods of %s with %s", cfg.Host, binary)
		if readyFile == "" {
			return nil
		}
		return os.WriteFile(readyFile, nil, 0o644)
	})
}
