// Command scalefill grows a cluster to a number of namespaces and pods for hack/bench-scale.sh:
// namespaces scale-0000... each with an equal share of pods (keep pods/namespaces the same
// across sizes), bound directly to the kwok nodes
// (spec.nodeName) so the scheduler is not the bottleneck. It only adds what is missing, so
// successive calls with larger sizes grow the same cluster.
//
//	scalefill -kubeconfig $KUBECONFIG -namespaces 2000 -pods 10000
//
// Requests run on -workers goroutines with client-side throttling raised to -qps.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig")
	namespaces := flag.Int("namespaces", 200, "namespaces to have")
	pods := flag.Int("pods", 1000, "pods to have, spread evenly over the namespaces")
	nodes := flag.Int("nodes", 10, "kwok nodes to add for the pods (scale-node-N)")
	workers := flag.Int("workers", 16, "concurrent requests")
	qps := flag.Float64("qps", 400, "client-side request rate limit")
	waitRunning := flag.Bool("wait-running", true, "wait until kwok reports every pod Running")
	flag.Parse()
	if err := run(*kubeconfig, *nodes, *namespaces, *pods, *workers, float32(*qps), *waitRunning); err != nil {
		fmt.Fprintln(os.Stderr, "scalefill:", err)
		os.Exit(1)
	}
}

func nsName(i int) string { return fmt.Sprintf("scale-%04d", i) }

func run(kubeconfig string, nodes, namespaces, pods, workers int, qps float32, waitRunning bool) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = qps, int(qps)
	cfg.Timeout = 60 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	start := time.Now()
	if err := ensureNodes(ctx, cs, nodes, (pods+nodes-1)/nodes); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}

	// Namespaces first: a pod needs its namespace (and the namespace its default
	// ServiceAccount, which the controller-manager adds; pod creation retries until then).
	if err := parallel(workers, namespaces, func(i int) error {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName(i), Labels: map[string]string{"scale.istioctl.test": "true"}}}
		_, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}); err != nil {
		return fmt.Errorf("namespaces: %w", err)
	}
	nsDone := time.Since(start)

	// Pod i is pod number i%per of namespace i/per, on node i % nodes: with the same pods per
	// namespace at every size, a larger size keeps the pods a smaller one made.
	per := (pods + namespaces - 1) / namespaces
	var created atomic.Int64
	if err := parallel(workers, pods, func(i int) error {
		ns := nsName(i / per)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%03d", i%per), Namespace: ns,
				Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%10), "scale.istioctl.test": "true"}},
			Spec: corev1.PodSpec{
				NodeName:                     nodeName(i % nodes),
				AutomountServiceAccountToken: new(bool),
				Tolerations:                  []corev1.Toleration{{Key: fillTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				Containers:                   []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}},
			},
		}
		for attempt := 0; ; attempt++ {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			switch {
			case err == nil:
				created.Add(1)
				return nil
			case apierrors.IsAlreadyExists(err):
				return nil
			case attempt < 100 && (apierrors.IsForbidden(err) && strings.Contains(err.Error(), "serviceaccount") || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)):
				time.Sleep(200 * time.Millisecond) // the namespace's default ServiceAccount is not there yet
			default:
				return err
			}
		}
	}); err != nil {
		return fmt.Errorf("pods: %w", err)
	}
	podsDone := time.Since(start)

	if waitRunning {
		for {
			running, total, err := countRunning(ctx, cs)
			if err != nil {
				return err
			}
			if running >= pods || time.Since(start) > 10*time.Minute {
				fmt.Fprintf(os.Stderr, "scalefill: %d/%d pods Running\n", running, total)
				break
			}
			time.Sleep(2 * time.Second)
		}
	}
	fmt.Fprintf(os.Stderr, "scalefill: %d namespaces (%.1fs), %d pods (%d new, %.1fs), all Running after %.1fs\n",
		namespaces, nsDone.Seconds(), pods, created.Load(), (podsDone - nsDone).Seconds(), time.Since(start).Seconds())
	return nil
}

const fillTaint = "scale.istioctl.test/fill"

func nodeName(i int) string { return fmt.Sprintf("scale-node-%d", i) }

// ensureNodes adds kwok nodes with room for podsPerNode pods, and at least 2,000 so that a
// cluster grown later still fits (a kwok node from up.sh has room for 110), tainted so that the scheduler keeps the install's own pods off them. A
// Node's status is taken on create (as a kubelet registers), so capacity is set there.
func ensureNodes(ctx context.Context, cs *kubernetes.Clientset, n, podsPerNode int) error {
	room := corev1.ResourceList{corev1.ResourcePods: resource.MustParse(fmt.Sprint(max(podsPerNode+100, 2000))),
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi")}
	for i := 0; i < n; i++ {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: nodeName(i),
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
				Labels: map[string]string{"type": "kwok", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
					"kubernetes.io/hostname": nodeName(i), "scale.istioctl.test": "true"}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: fillTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Capacity: room, Allocatable: room, Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.255.1.%d", i+1)}, {Type: corev1.NodeHostName, Address: "localhost"}}},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// countRunning pages through the scale pods (500 a page) and counts those Running.
func countRunning(ctx context.Context, cs *kubernetes.Clientset) (running, total int, err error) {
	opts := metav1.ListOptions{LabelSelector: "scale.istioctl.test=true", Limit: 500}
	for {
		l, err := cs.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return 0, 0, err
		}
		for i := range l.Items {
			total++
			if l.Items[i].Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if l.Continue == "" {
			return running, total, nil
		}
		opts.Continue = l.Continue
	}
}

// parallel runs f(0..n-1) on at most workers goroutines and returns the first error.
func parallel(workers, n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				mu.Lock()
				stop := first != nil
				mu.Unlock()
				if stop {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}
