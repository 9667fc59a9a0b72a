package v1alpha1

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// Group, version and kind of the install spec.
const (
	Group      = "install.istio.io"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	KindName   = "IstioOperator"
)

// IstioOperator is the install spec.
type IstioOperator struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   ObjectMeta        `json:"metadata,omitempty"`
	Spec       IstioOperatorSpec `json:"spec,omitempty"`
}

// ObjectMeta is the part of Kubernetes object metadata an install spec uses: the name and
// namespace become ownership labels of everything installed.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// IstioOperatorSpec says what to install.
type IstioOperatorSpec struct {
	// Profile is a profile name or the path of a profile file.
	Profile string `json:"profile,omitempty"`
	// InstallPackagePath is a directory holding charts/ and profiles/ (same as --manifests).
	InstallPackagePath string `json:"installPackagePath,omitempty"`
	Hub                string `json:"hub,omitempty"`
	// Tag is written as any scalar (1.30 stays "1.30").
	Tag                  string `json:"tag,omitempty" scalar:"string"`
	Namespace            string `json:"namespace,omitempty"`
	Revision             string `json:"revision,omitempty"`
	CompatibilityVersion string `json:"compatibilityVersion,omitempty" scalar:"string"`
	// MeshConfig is checked against istio.io/api's MeshConfig; unknown keys pass, as upstream.
	MeshConfig map[string]any  `json:"meshConfig,omitempty" schema:"meshconfig"`
	Components *ComponentsSpec `json:"components,omitempty"`
	// Values are Helm values, checked against the Values schema.
	Values map[string]any `json:"values,omitempty" schema:"values"`
	// UnvalidatedValues are merged into the values with no check of names or types; only
	// their shapes are checked (an object where the charts read an object, ...).
	UnvalidatedValues map[string]any `json:"unvalidatedValues,omitempty" schema:"unvalidated"`
	// External is what the install relies on but does not install (this tool's extension:
	// see ExternalSpec).
	External *ExternalSpec `json:"external,omitempty"`
	// EastWest is what the east-west gateway exposes (this tool's extension: see
	// EastWestSpec).
	EastWest *EastWestSpec `json:"eastWest,omitempty"`
}

// EastWestSpec makes the install's east-west gateway (the ingress gateway named
// istio-eastwestgateway, profile eastwest) expose istiod and the mesh's services: the Istio
// objects of upstream's samples/multicluster/expose-istiod.yaml and expose-services.yaml.
type EastWestSpec struct {
	ExposeIstiod   bool `json:"exposeIstiod,omitempty"`
	ExposeServices bool `json:"exposeServices,omitempty"`
}

// ComponentsSpec selects and configures the components.
type ComponentsSpec struct {
	Base    *BaseComponentSpec `json:"base,omitempty"`
	Pilot   *ComponentSpec     `json:"pilot,omitempty"`
	Cni     *ComponentSpec     `json:"cni,omitempty"`
	Ztunnel *ComponentSpec     `json:"ztunnel,omitempty"`
	// IstiodRemote is accepted for compatibility and renders nothing, as upstream.
	IstiodRemote    *ComponentSpec         `json:"istiodRemote,omitempty" deprecated:"true"`
	IngressGateways []GatewayComponentSpec `json:"ingressGateways,omitempty"`
	EgressGateways  []GatewayComponentSpec `json:"egressGateways,omitempty"`
}

// BaseComponentSpec configures the Base component (CRDs and cluster-wide pieces).
type BaseComponentSpec struct {
	Enabled    *bool                `json:"enabled,omitempty"`
	Kubernetes *KubernetesResources `json:"k8s,omitempty"`
}

// ComponentSpec configures a single-instance component.
type ComponentSpec struct {
	Enabled    *bool                `json:"enabled,omitempty"`
	Namespace  string               `json:"namespace,omitempty"`
	Hub        string               `json:"hub,omitempty"`
	Tag        string               `json:"tag,omitempty" scalar:"string"`
	Kubernetes *KubernetesResources `json:"k8s,omitempty"`
}

// GatewayComponentSpec configures one ingress or egress gateway.
type GatewayComponentSpec struct {
	Name string `json:"name,omitempty"`
	// Enabled defaults to true for a listed gateway.
	Enabled    *bool                `json:"enabled,omitempty"`
	Namespace  string               `json:"namespace,omitempty"`
	Label      map[string]string    `json:"label,omitempty"`
	Hub        string               `json:"hub,omitempty"`
	Tag        string               `json:"tag,omitempty" scalar:"string"`
	Kubernetes *KubernetesResources `json:"k8s,omitempty"`
}

// KubernetesResources are Kubernetes settings patched onto a component's main workload
// and its companions (Service, HPA, PDB).
type KubernetesResources struct {
	Affinity            *corev1.Affinity                           `json:"affinity,omitempty"`
	Env                 []corev1.EnvVar                            `json:"env,omitempty"`
	HpaSpec             *autoscalingv2.HorizontalPodAutoscalerSpec `json:"hpaSpec,omitempty"`
	ImagePullPolicy     string                                     `json:"imagePullPolicy,omitempty" enum:"Always,Never,IfNotPresent"`
	NodeSelector        map[string]string                          `json:"nodeSelector,omitempty"`
	PodDisruptionBudget *policyv1.PodDisruptionBudgetSpec          `json:"podDisruptionBudget,omitempty"`
	PodAnnotations      map[string]string                          `json:"podAnnotations,omitempty"`
	PriorityClassName   string                                     `json:"priorityClassName,omitempty"`
	ReadinessProbe      *corev1.Probe                              `json:"readinessProbe,omitempty"`
	ReplicaCount        *int64                                     `json:"replicaCount,omitempty"`
	Resources           *corev1.ResourceRequirements               `json:"resources,omitempty"`
	Service             *corev1.ServiceSpec                        `json:"service,omitempty"`
	Strategy            *appsv1.DeploymentStrategy                 `json:"strategy,omitempty"`
	Tolerations         []corev1.Toleration                        `json:"tolerations,omitempty"`
	ServiceAnnotations  map[string]string                          `json:"serviceAnnotations,omitempty"`
	SecurityContext     *corev1.PodSecurityContext                 `json:"securityContext,omitempty"`
	Volumes             []corev1.Volume                            `json:"volumes,omitempty"`
	VolumeMounts        []corev1.VolumeMount                       `json:"volumeMounts,omitempty"`
	Overlays            []KubernetesOverlay                        `json:"overlays,omitempty"`
}

// kubernetesResources is KubernetesResources without its MarshalJSON.
type kubernetesResources KubernetesResources

// MarshalJSON encodes k as encoding/json encodes the struct. With it, encoding/json does
// not build the encoders of all the Kubernetes types the fields hold (Affinity, Volume,
// ServiceSpec, ...) the first time it encodes or decodes any spec (spec.Resolve decodes
// one into IstioOperator): it builds them only for a spec that sets k8s settings. Not an
// UnmarshalJSON: that would make the field opaque to the schema (goSchema.Kind).
func (k KubernetesResources) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the caller's encoder escapes, or not, as it would the struct
	if err := enc.Encode(kubernetesResources(k)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// KubernetesOverlay patches one rendered object of the component.
type KubernetesOverlay struct {
	// APIVersion is accepted and ignored, as upstream.
	APIVersion string  `json:"apiVersion,omitempty"`
	Kind       string  `json:"kind,omitempty"`
	Name       string  `json:"name,omitempty"`
	Patches    []Patch `json:"patches,omitempty"`
}

// Patch sets (or, without a value, deletes) the field at Path, e.g.
// `spec.template.spec.containers.[name:discovery].args.[1]`.
type Patch struct {
	Path  string `json:"path,omitempty"`
	Value any    `json:"value,omitempty"`
}

// componentFields maps a spec.components key to its field of ComponentsSpec, so code can
// reach a component's settings by its registry key (component.Component.SpecKey) instead of
// a switch to keep in step with the fields.
var componentFields = sync.OnceValue(func() map[string]int {
	t := reflect.TypeOf(ComponentsSpec{})
	out := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = i
	}
	return out
})

// Single returns the settings of the single-instance component under key (nil when unset,
// or when key names no such component).
func (cs *ComponentsSpec) Single(key string) *ComponentSpec {
	if cs == nil {
		return nil
	}
	i, ok := componentFields()[key]
	if !ok {
		return nil
	}
	s, _ := reflect.ValueOf(cs).Elem().Field(i).Interface().(*ComponentSpec)
	return s
}

// Gateways returns the gateway list under key; ok says key names a gateway kind.
func (cs *ComponentsSpec) Gateways(key string) (list []GatewayComponentSpec, ok bool) {
	if cs == nil {
		return nil, true
	}
	i, found := componentFields()[key]
	if !found {
		return nil, false
	}
	list, ok = reflect.ValueOf(cs).Elem().Field(i).Interface().([]GatewayComponentSpec)
	return list, ok
}
