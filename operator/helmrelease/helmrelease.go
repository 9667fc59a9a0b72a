// Package helmrelease reads and retires Helm releases from their release records, without
// Helm's library: a record is a Secret (Helm's default storage) or a ConfigMap (its
// configmap driver) named sh.helm.release.v1.<release>.v<revision>, labelled owner=helm,
// whose "release" key holds the release as base64 text of gzipped JSON. Linking Helm's
// storage and action packages for this would add their start-up and memory to every
// istioctl command; the format is small and stable (release.v1).
//
// It never reads or prints a record's values (a release's values may hold secrets): only
// its name, revision, status, chart and the objects its manifest lists.
package helmrelease

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/istioctl-installer/istioctl/operator/bounded"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
)

// The annotations Helm puts on every object of a release, and its records' labels and type.
const (
	AnnotationName      = "meta.helm.sh/release-name"
	AnnotationNamespace = "meta.helm.sh/release-namespace"
	// SecretType is the type of a record Secret.
	SecretType = "helm.sh/release.v1"
	labelOwner = "owner"
	labelName  = "name"
	dataKey    = "release"
)

// Release is one Helm release, as its newest record says.
type Release struct {
	Name, Namespace string
	// Revision and Status are the newest record's (Status: deployed, failed, ...).
	Revision int
	Status   string
	// Chart is the chart's name-version.
	Chart string
	// Records are every record of the release (all revisions) as Kind/namespace/name:
	// what helm uninstall deletes, and what retiring the release deletes.
	Records []string
	// Objects are the objects the newest record's manifest lists.
	Objects []Object

	records []*unstructured.Unstructured
}

// Key is the release's namespace/name.
func (r *Release) Key() string { return r.Namespace + "/" + r.Name }

// Object is an object a release's manifest lists. Namespace is as the manifest says:
// Helm puts a namespaced object without one into the release's namespace.
type Object struct {
	APIVersion, Kind, Namespace, Name string
}

// GVK is the object's kind.
func (o Object) GVK() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(o.APIVersion, o.Kind)
}

// Get reads the release name in namespace from its records (nil, nil when it has none).
func Get(ctx context.Context, c *kube.Client, namespace, name string) (*Release, error) {
	selector := labelOwner + "=helm," + labelName + "=" + name
	var records []*unstructured.Unstructured
	for _, gvk := range []schema.GroupVersionKind{kube.SecretGVK, kube.ConfigMapGVK} {
		list, err := c.ListIn(ctx, gvk, namespace, selector)
		if err != nil {
			return nil, fmt.Errorf("reading the records of Helm release %s/%s: %w", namespace, name, err)
		}
		for i := range list {
			o := &list[i]
			if gvk == kube.SecretGVK {
				if t, _, _ := unstructured.NestedString(o.Object, "type"); t != SecretType {
					continue
				}
			}
			o.SetGroupVersionKind(gvk)
			records = append(records, o)
		}
	}
	if len(records) == 0 {
		return nil, nil
	}
	rel := &Release{Name: name, Namespace: namespace, records: records}
	var newest *unstructured.Unstructured
	for _, o := range records {
		rel.Records = append(rel.Records, ref.Of(o).String())
		if newest == nil || version(o) > version(newest) {
			newest = o
		}
	}
	sort.Strings(rel.Records)
	rec, err := decodeRecord(newest)
	if err != nil {
		return nil, fmt.Errorf("reading %s, a record of Helm release %s/%s: %w", ref.Of(newest).String(), namespace, name, err)
	}
	rel.Revision, rel.Status = rec.Version, rec.Info.Status
	if m := rec.Chart.Metadata; m.Name != "" {
		rel.Chart = m.Name + "-" + m.Version
	}
	if rel.Objects, err = ManifestObjects(rec.Manifest); err != nil {
		return nil, fmt.Errorf("reading the manifest of %s, a record of Helm release %s/%s: %w", ref.Of(newest).String(), namespace, name, err)
	}
	return rel, nil
}

// version is a record's revision, from its label (Helm sets it on every record).
func version(o *unstructured.Unstructured) int {
	n, _ := strconv.Atoi(o.GetLabels()["version"])
	return n
}

// Left is a record Retire left: as Get read it, and as the cluster holds it now.
type Left struct{ Planned, Live *unstructured.Unstructured }

// Retire deletes every record of the release (with dryRun, the server only checks it
// could): Helm then no longer knows the release, and its objects stay as they are. Each
// record is deleted as Get read it (kube.Client.DeleteAsJudged): one that changed since is
// deleted only while its labels still make it a record of the release; one re-created
// since, or no longer the release's, is left and returned.
func Retire(ctx context.Context, c *kube.Client, r *Release, dryRun bool) ([]Left, error) {
	still := func(live *unstructured.Unstructured) bool {
		l := live.GetLabels()
		return l[labelOwner] == "helm" && l[labelName] == r.Name
	}
	var left []Left
	for _, o := range r.records {
		live, err := c.DeleteAsJudged(ctx, o, dryRun, still)
		if err != nil {
			return left, fmt.Errorf("retiring Helm release %s: %w", r.Key(), err)
		}
		if live != nil {
			left = append(left, Left{o, live})
		}
	}
	return left, nil
}

// record is the part of a release record this package reads (Helm's release.v1 JSON).
type record struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Version   int    `json:"version"`
	Info      struct {
		Status string `json:"status"`
	} `json:"info"`
	Chart struct {
		Metadata struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"metadata"`
	} `json:"chart"`
	Manifest string `json:"manifest"`
}

// gzipMagic starts a gzipped record; Helm also reads records stored without compression.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

func decodeRecord(o *unstructured.Unstructured) (*record, error) {
	text, ok, _ := unstructured.NestedString(o.Object, "data", dataKey)
	if !ok {
		return nil, fmt.Errorf("no %q key", dataKey)
	}
	if o.GetKind() == "Secret" {
		// A Secret's data reaches us base64-encoded once more.
		raw, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, fmt.Errorf("the %q key is not base64: %w", dataKey, err)
		}
		text = string(raw)
	}
	return decode([]byte(text))
}

// decode reads a release record's payload: base64 text of (usually gzipped) JSON. The
// unzipped JSON is bounded (bounded.MaxUnzipped): a 1 MiB Secret can inflate to 1 GiB.
func decode(payload []byte) (*record, error) {
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(payload)))
	if err != nil {
		return nil, fmt.Errorf("the release is not base64: %w", err)
	}
	if bytes.HasPrefix(data, gzipMagic) {
		if data, err = bounded.Gunzip(data, "the release"); err != nil {
			return nil, err
		}
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the release is not Helm's release JSON: %w", err)
	}
	return &r, nil
}

// ManifestObjects lists the objects a release manifest (YAML documents) holds.
func ManifestObjects(manifest string) ([]Object, error) {
	dec := yaml.NewDecoder(strings.NewReader(manifest))
	var out []Object
	for doc := 1; ; doc++ {
		var o struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name      string `yaml:"name"`
				Namespace string `yaml:"namespace"`
			} `yaml:"metadata"`
		}
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if o.Kind == "" && o.Metadata.Name == "" {
			continue // an empty document
		}
		out = append(out, Object{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Metadata.Namespace, Name: o.Metadata.Name})
	}
}

// Scoped is o with the namespace the cluster puts it in: the release's for a namespaced
// object the manifest gives none, none for a cluster-scoped one.
func (r *Release) Scoped(c *kube.Client, o Object) (Object, error) {
	mapping, err := c.Mapper.RESTMapping(o.GVK().GroupKind(), o.GVK().Version)
	if meta.IsNoMatchError(err) {
		return o, nil // a kind the cluster no longer serves: nothing of it is left
	}
	if err != nil {
		return o, c.ExplainError(err)
	}
	switch {
	case mapping.Scope.Name() != meta.RESTScopeNameNamespace:
		o.Namespace = ""
	case o.Namespace == "":
		o.Namespace = r.Namespace
	}
	return o, nil
}

// Ref is the object's reference.
func (o Object) Ref() ref.Ref { return ref.OfGVK(o.GVK(), o.Namespace, o.Name) }
