package fleetrun_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// TestFleetLinkIdentityE2E: cluster-2 reachable through two context names (cluster-2 and
// cluster-2-alias). With the links annotated with the alias, fleet install of the full
// file removes no link and revokes no token (nothing in any cluster changes), and so with
// the file naming cluster-2 by its alias and the links by its first name; both runs say,
// by a kept event, that the context their links name is the same cluster. Then cluster-2
// truly dropped from the file: only the fleet's link Secrets in its istio namespace go
// (and the tokens issued for them); a Secret in another namespace that carries only the
// fleet's label, and one in the istio namespace with the fleet's and the multicluster
// labels that istioctl did not write (named by a kept event), survive.
func TestFleetLinkIdentityE2E(t *testing.T) {
	b := newFleetBed(t)
	for _, c := range b.bed.Clusters {
		c.RequireRealIstiod(t)
	}
	ctx := context.Background()
	kc := fleetAliasKubeconfig(t, b.bed.Kubeconfig, "cluster-2", "cluster-2-alias")
	// The example without cacerts: what is compared is the links and the tokens.
	if _, _, err := b.install(ctx, kc, fleetExample); err != nil {
		t.Fatalf("fleet install: %v", err)
	}
	c2 := b.member("cluster-2")

	t.Run("links annotated with the alias: the full file removes no link, revokes no token", func(t *testing.T) {
		b := b.with(t)
		fleetReannotate(t, b, "cluster-2", "cluster-2-alias")
		b.changesNothing(kc, fleetExample, "cluster-2-alias")
	})

	t.Run("the file naming cluster-2 by its alias: no link removed, no token revoked", func(t *testing.T) {
		b := b.with(t)
		fleetReannotate(t, b, "cluster-2-alias", "cluster-2")
		aliased := fleetEdited(t, fleetExample, "fleet-alias.yaml", nil, func(spec map[string]any) {
			for _, c := range spec["clusters"].([]any) {
				if m := c.(map[string]any); m["name"] == "cluster-2" {
					m["context"] = "cluster-2-alias"
				}
			}
		})
		b.changesNothing(kc, aliased, "cluster-2")
	})

	t.Run("cluster-2 truly dropped: only the fleet's links in its istio namespace go", func(t *testing.T) {
		b := b.with(t)
		fleetOnly := fleetPutSecret(t, c2, "default", "fleet-labelled", ownership.FleetLabels("mesh1", "bed"))
		byHand := ownership.FleetLabels("mesh1", "bed")
		byHand[ownership.LabelMultiCluster] = "true"
		notOurs := fleetPutSecret(t, c2, "istio-system", "fleet-labelled-by-hand", byHand)
		uids := map[string]string{}
		for _, c := range b.bed.Clusters {
			uids[c.Context] = fleetClusterUID(t, c)
		}
		before := b.versions()
		_, rec, err := b.install(ctx, kc, fleetWithout(t, fleetExample, "cluster-2"))
		if err != nil {
			t.Fatalf("fleet install without cluster-2: %v", err)
		}
		want := []string{"cluster-1: deleted Secret/istio-system/istio-remote-secret-cluster-2",
			"cluster-2: deleted Secret/istio-system/istio-remote-secret-cluster-1", "cluster-2: deleted Secret/istio-system/istio-remote-secret-cluster-3"}
		if diff := fleetBedDiff(before, b.versions(), false); !slices.Equal(diff, want) {
			t.Errorf("dropping cluster-2 changed (token Secrets aside)\n  %s\nwant\n  %s", strings.Join(diff, "\n  "), strings.Join(want, "\n  "))
		}
		for _, s := range []*corev1.Secret{fleetOnly, notOurs} {
			live, err := c2.Kube.CoreV1().Secrets(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
			if err != nil || live.UID != s.UID {
				t.Errorf("Secret %s/%s in cluster-2 did not survive: %v", s.Namespace, s.Name, err)
			}
		}
		var named bool
		for _, e := range rec.Of(event.Kept) {
			named = named || (e.Cluster == "cluster-2" && e.KeptReason == event.KeptNotALink && e.Object == "Secret/istio-system/fleet-labelled-by-hand")
		}
		if !named {
			t.Errorf("no kept event names cluster-2's Secret/istio-system/fleet-labelled-by-hand: %v", rec.Of(event.Kept))
		}
		// The tokens went with their links: those cluster-1 and cluster-3 issued for their
		// links into cluster-2, and the one cluster-2 issued for its link into cluster-1.
		for _, tok := range [][2]string{{"cluster-1", "cluster-2"}, {"cluster-3", "cluster-2"}, {"cluster-2", "cluster-1"}} {
			list, err := b.member(tok[0]).Kube.CoreV1().Secrets("istio-system").List(ctx, metav1.ListOptions{LabelSelector: ownership.LabelTokenFor + "=" + uids[tok[1]]})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) > 0 {
				t.Errorf("%s still holds the token of its link into %s: %s", tok[0], tok[1], list.Items[0].Name)
			}
		}
	})

	t.Run("no credential said", func(t *testing.T) { b.noCredentialSaid(t) })
}

// fleetAliasKubeconfig is kubeconfig with one more context, alias, for the cluster and
// user of context name.
func fleetAliasKubeconfig(t *testing.T, kubeconfig, name, alias string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := cfg.Contexts[name]
	if !ok {
		t.Fatalf("%s: no context %s", kubeconfig, name)
	}
	cfg.Contexts[alias] = c.DeepCopy()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// fleetReannotate points every link Secret of the bed whose context annotation is from at
// context to instead (as another operator's kubeconfig, or a renamed context, would have
// written it).
func fleetReannotate(t *testing.T, b *fleetBed, from, to string) {
	t.Helper()
	ctx := context.Background()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{ownership.AnnotationFleetFrom: to}}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range b.bed.Clusters {
		list, err := c.Kube.CoreV1().Secrets("istio-system").List(ctx, metav1.ListOptions{LabelSelector: ownership.FleetSelector("bed")})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Items {
			if s.Annotations[ownership.AnnotationFleetFrom] != from {
				continue
			}
			if s.Annotations[ownership.AnnotationFleetFromUID] == "" {
				t.Errorf("%s: Secret %s records no cluster identity", c.Context, s.Name)
			}
			if _, err := c.Kube.CoreV1().Secrets(s.Namespace).Patch(ctx, s.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no link Secret names context %s", from)
	}
}

// changesNothing is fleet install of file through kubeconfig kc, which must change no
// object of any cluster (links and tokens included) and leave every link unchanged, with a
// kept event saying the links that name context kctx are cluster-2's.
func (b *fleetBed) changesNothing(kc, file, kctx string) {
	t := b.t
	t.Helper()
	before := b.versions()
	res, rec, err := b.install(context.Background(), kc, file)
	if err != nil {
		t.Fatalf("fleet install: %v", err)
	}
	if diff := fleetBedDiff(before, b.versions(), true); len(diff) > 0 {
		t.Errorf("fleet install changed:\n  %s", strings.Join(diff, "\n  "))
	}
	if len(res.Links) == 0 {
		t.Error("the run has no links")
	}
	for _, l := range res.Links {
		if l.Outcome != event.LinkUnchanged {
			t.Errorf("link %s in %s: %s %s, want unchanged", l.Secret, l.Into, l.Outcome, l.Error)
		}
	}
	for _, e := range rec.Of(event.Kept) {
		if e.Cluster == "cluster-2" && e.KeptReason == event.KeptSameCluster && strings.Contains(e.Message, "context "+kctx+",") {
			return
		}
	}
	t.Errorf("no kept event says context %s is cluster-2: %v", kctx, rec.Of(event.Kept))
}

// fleetPutSecret creates a Secret with labels in c (not by istioctl), deleted when the
// test ends.
func fleetPutSecret(t *testing.T, c *cluster.Cluster, ns, name string, labels map[string]string) *corev1.Secret {
	t.Helper()
	ctx := context.Background()
	s, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		StringData: map[string]string{"note": "not istioctl's"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Kube.CoreV1().Secrets(ns).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return s
}

// fleetClusterUID is c's identity: its kube-system namespace's UID.
func fleetClusterUID(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	ns, err := c.Kube.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(ns.UID)
}
