package main

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// controller gives each LoadBalancer Service an address from its pool, in status only. One
// worker: the pool is then never shared between goroutines.
type controller struct {
	client kubernetes.Interface
	pool   *pool
	lister corelisters.ServiceLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

func newController(client kubernetes.Interface, p *pool) (*controller, cache.SharedIndexInformer, error) {
	inf := coreinformers.NewServiceInformer(client, metav1.NamespaceAll, 0, cache.Indexers{})
	c := &controller{
		client: client,
		pool:   p,
		lister: corelisters.NewServiceLister(inf.GetIndexer()),
		synced: inf.HasSynced,
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	return c, inf, err
}

// wants: a LoadBalancer Service that no other controller claims (loadBalancerClass set
// means another implementation serves it, as with a real cloud).
func wants(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.LoadBalancerClass == nil
}

// heldAddress is the first ingress IP of the Service's status that lies in the pool.
func (c *controller) heldAddress(s *corev1.Service) (netip.Addr, bool) {
	for _, in := range s.Status.LoadBalancer.Ingress {
		if ip, err := netip.ParseAddr(in.IP); err == nil && c.pool.contains(ip) {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// run waits for the cache, adopts the addresses Services already hold (before any new
// one is handed out, so none is given twice), calls ready and works until ctx ends.
func (c *controller) run(ctx context.Context, ready func() error) error {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return fmt.Errorf("the Service cache did not sync: %w", ctx.Err())
	}
	all, err := c.lister.List(everything)
	if err != nil {
		return err
	}
	for _, s := range all {
		if ip, ok := c.heldAddress(s); ok && wants(s) {
			key, _ := cache.MetaNamespaceKeyFunc(s)
			c.pool.adopt(key, ip)
		}
	}
	go func() {
		for c.next(ctx) {
		}
	}()
	if err := ready(); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func (c *controller) next(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		log.Printf("%s: %v (retrying)", key, err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync brings one Service's status in line: an address while it wants one, none after.
// A status someone else wrote (an address outside the pool) is left alone.
func (c *controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key we can act on; retrying will not help
	}
	s, err := c.lister.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.pool.release(key)
		return nil
	}
	if err != nil {
		return err
	}
	held, holds := c.heldAddress(s)
	if !wants(s) {
		c.pool.release(key)
		if !holds {
			return nil
		}
		s = s.DeepCopy()
		s.Status.LoadBalancer = corev1.LoadBalancerStatus{}
		return c.write(ctx, s, "cleared "+held.String())
	}
	if holds && c.pool.adopt(key, held) {
		return nil
	}
	if !holds && len(s.Status.LoadBalancer.Ingress) > 0 {
		return nil
	}
	ip, err := c.pool.assign(key)
	if err != nil {
		return err
	}
	s = s.DeepCopy()
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip.String(), IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)}}
	return c.write(ctx, s, "assigned "+ip.String())
}

func (c *controller) write(ctx context.Context, s *corev1.Service, what string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.client.CoreV1().Services(s.Namespace).UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	log.Printf("%s/%s: %s", s.Namespace, s.Name, what)
	return nil
}
