package check

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// SectionFleetLinks holds the check of the links a fleet makes.
const SectionFleetLinks = "Links of the fleet"

// FleetLinks is what fleet-links looks at: the fleet, the links it makes, and a client per
// cluster (nil: it cannot be reached). Verify says the fleet is installed (fleet verify):
// each link must be there; else (fleet precheck) each must be free or the fleet's own.
type FleetLinks struct {
	// MeshID and Name are the fleet's.
	MeshID, Name string
	Links        []FleetLink
	Clients      map[string]*kube.Client
	Verify       bool
}

// FleetLink is one link the fleet makes: the Secret (Namespace, Name, its kubeconfig under
// Key) through which cluster Into reads cluster From, and the command that makes it.
type FleetLink struct {
	Namespace, Name, Key string
	Into, From, Command  string
}

// fleetLinks checks every link of the fleet, concurrently.
func fleetLinks(ctx context.Context, env *Env) []Result {
	fl := env.FleetLinks
	if fl == nil {
		return nil
	}
	out := make([]Result, len(fl.Links))
	var wg sync.WaitGroup
	for i, l := range fl.Links {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = linkResult(ctx, fl, l, fl.Clients[l.Into])
		}()
	}
	wg.Wait()
	return out
}

func linkResult(ctx context.Context, f *FleetLinks, l FleetLink, client *kube.Client) Result {
	verify := f.Verify
	obj := ref.New("Secret", l.Namespace, l.Name).String() + " in cluster " + l.Into
	res := Result{Object: obj}
	if client == nil {
		res.Message = fmt.Sprintf("cannot be checked: cluster %s cannot be reached", l.Into)
		return res
	}
	probe := &unstructured.Unstructured{}
	probe.SetAPIVersion("v1")
	probe.SetKind("Secret")
	probe.SetNamespace(l.Namespace)
	probe.SetName(l.Name)
	live, err := client.Get(ctx, probe)
	if err != nil && !apierrors.IsNotFound(err) {
		res.Message = fmt.Sprintf("cannot be read: %v", err)
		return res
	}
	if live == nil || apierrors.IsNotFound(err) {
		if verify {
			res.Message = fmt.Sprintf("is missing: %s reads no link to %s; make it with %s", l.Into, l.From, l.Command)
			res.Hint = doc("fleet.md", "fleet-links")
			return res
		}
		res.Passed, res.Message = true, fmt.Sprintf("is free: the link from %s will be made there", l.From)
		return res
	}
	labels := live.GetLabels()
	mesh, name := labels[ownership.LabelFleetMesh], labels[ownership.LabelFleetName]
	switch {
	case (mesh != "" && mesh != f.MeshID) || (name != "" && name != f.Name):
		res.Message = fmt.Sprintf("belongs to fleet %q of mesh %q, not to this one (%q of %q)", name, mesh, f.Name, f.MeshID)
		res.Hint = "two fleets name one cluster: remove it from one of them, or delete the Secret (" + doc("fleet.md", "fleet-links") + ")"
		return res
	case verify:
		key := l.Key
		data, _, _ := unstructured.NestedMap(live.Object, "data")
		if _, ok := data[key]; !ok {
			res.Message = fmt.Sprintf("holds no kubeconfig under %s: make it again with %s", key, l.Command)
			return res
		}
		res.Passed, res.Message = true, fmt.Sprintf("is there: %s reads %s with it (the link checks of cluster %s say whether it works)", l.Into, l.From, l.Into)
	case mesh == "":
		res.Passed, res.Severity = false, Warning
		res.Message = "exists, made by hand (no fleet labels): installing the fleet takes it over and rotates its token"
	default:
		res.Passed, res.Message = true, "exists, this fleet's own: installing the fleet rotates its token"
	}
	return res
}
