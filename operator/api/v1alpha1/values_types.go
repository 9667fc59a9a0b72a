package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// This file is the typed schema of the Helm values (spec.values of an IstioOperator). It
// follows upstream Istio's values proto (istio.operator.v1alpha1) field for field: JSON
// names are the proto JSON names, optional scalars are pointers so that "unset" and "zero"
// differ. A google.protobuf.Struct is map[string]any (an object of anything, as upstream
// decodes it), a google.protobuf.Value `any`; a field that holds a Kubernetes object
// (tolerations, affinity, volumes, ...) is that Kubernetes Go type, so it is checked field
// by field as upstream checks it.
//
// Struct tags beyond `json`:
//   - enum:"A,B,..."     the field is a proto enum; the accepted JSON values.
//   - deprecated:"true"  the proto marks the field deprecated.
//   - schema:"..."       a free-form field checked against a shape of its own (schema.go).
//
// The proto's IntOrString message is represented by intstr.IntOrString (a JSON int or
// string), so it has no struct here. testdata/values_fields.txt records the proto's fields
// and values_types_test.go checks these types against it.

// ArchConfig is the deprecated per-architecture scheduling weight.
type ArchConfig struct {
	Amd64   *int64 `json:"amd64,omitempty"`
	Ppc64Le *int64 `json:"ppc64le,omitempty"`
	S390X   *int64 `json:"s390x,omitempty"`
	Arm64   *int64 `json:"arm64,omitempty"`
}

// CNIConfig configures the istio-cni node agent chart.
type CNIConfig struct {
	Enabled *bool  `json:"enabled,omitempty"`
	Hub     string `json:"hub,omitempty"`
	// Tag is an image tag; YAML may write it as a string or a number.
	Tag             any    `json:"tag,omitempty" scalar:"string"`
	Variant         string `json:"variant,omitempty"`
	Image           string `json:"image,omitempty"`
	PullPolicy      string `json:"pullPolicy,omitempty"`
	CniBinDir       string `json:"cniBinDir,omitempty"`
	CniConfDir      string `json:"cniConfDir,omitempty"`
	CniConfFileName string `json:"cniConfFileName,omitempty"`
	CniNetnsDir     string `json:"cniNetnsDir,omitempty"`
	// ExcludeNamespaces are namespaces whose pods the CNI plugin leaves alone.
	ExcludeNamespaces []string `json:"excludeNamespaces,omitempty"`
	// Affinity is a Kubernetes Affinity object.
	Affinity        *corev1.Affinity     `json:"affinity,omitempty"`
	Env             map[string]any       `json:"env,omitempty"`
	DaemonSetLabels map[string]any       `json:"daemonSetLabels,omitempty"`
	PodAnnotations  map[string]any       `json:"podAnnotations,omitempty" deprecated:"true"`
	PodLabels       map[string]any       `json:"podLabels,omitempty"`
	PspClusterRole  string               `json:"pspClusterRole,omitempty"`
	LogLevel        string               `json:"logLevel,omitempty" deprecated:"true"`
	Logging         *GlobalLoggingConfig `json:"logging,omitempty"`
	Repair          *CNIRepairConfig     `json:"repair,omitempty"`
	// Chained selects chained-plugin mode rather than a standalone CNI config file.
	Chained        *bool           `json:"chained,omitempty"`
	ResourceQuotas *ResourceQuotas `json:"resourceQuotas,omitempty"`
	Resources      *Resources      `json:"resources,omitempty"`
	Privileged     *bool           `json:"privileged,omitempty" deprecated:"true"`
	// SeccompProfile is a Kubernetes SeccompProfile object.
	SeccompProfile        *corev1.SeccompProfile `json:"seccompProfile,omitempty"`
	Ambient               *CNIAmbientConfig      `json:"ambient,omitempty"`
	Provider              string                 `json:"provider,omitempty"`
	RollingMaxUnavailable *intstr.IntOrString    `json:"rollingMaxUnavailable,omitempty"`
	IstioOwnedCNIConfig   *bool                  `json:"istioOwnedCNIConfig,omitempty"`
	// IstioOwnedCNIConfigFileName is the file name used when IstioOwnedCNIConfig is set.
	IstioOwnedCNIConfigFileName string `json:"istioOwnedCNIConfigFileName,omitempty"`
	UseAppArmorAnnotation       *bool  `json:"useAppArmorAnnotation,omitempty"`
}

// CNIUsageConfig tells istiod whether (and which) CNI is in use.
type CNIUsageConfig struct {
	Enabled  *bool  `json:"enabled,omitempty"`
	Chained  *bool  `json:"chained,omitempty" deprecated:"true"`
	Provider string `json:"provider,omitempty"`
}

// CNIAmbientConfig configures the CNI agent's ambient-mode support.
type CNIAmbientConfig struct {
	Enabled                    *bool  `json:"enabled,omitempty"`
	ConfigDir                  string `json:"configDir,omitempty"`
	DnsCapture                 *bool  `json:"dnsCapture,omitempty"`
	Ipv6                       *bool  `json:"ipv6,omitempty"`
	ReconcileIptablesOnStartup *bool  `json:"reconcileIptablesOnStartup,omitempty"`
}

// CNIRepairConfig configures the CNI agent's repair of pods that started without
// traffic redirection.
type CNIRepairConfig struct {
	Enabled             *bool  `json:"enabled,omitempty"`
	Hub                 string `json:"hub,omitempty"`
	Tag                 any    `json:"tag,omitempty" scalar:"string"`
	Image               string `json:"image,omitempty"`
	LabelPods           *bool  `json:"labelPods,omitempty"`
	RepairPods          *bool  `json:"repairPods,omitempty"`
	CreateEvents        string `json:"createEvents,omitempty" deprecated:"true"`
	DeletePods          *bool  `json:"deletePods,omitempty"`
	BrokenPodLabelKey   string `json:"brokenPodLabelKey,omitempty"`
	BrokenPodLabelValue string `json:"brokenPodLabelValue,omitempty"`
	InitContainerName   string `json:"initContainerName,omitempty"`
}

// ResourceQuotas configures a ResourceQuota for the CNI namespace.
type ResourceQuotas struct {
	Enabled *bool  `json:"enabled,omitempty"`
	Pods    *int64 `json:"pods,omitempty"`
}

// TargetUtilizationConfig is a deprecated HPA utilization target.
type TargetUtilizationConfig struct {
	TargetAverageUtilization *int64 `json:"targetAverageUtilization,omitempty"`
}

// Resources holds container resource limits and requests as quantity strings.
type Resources struct {
	Limits   map[string]string `json:"limits,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
}

// ServiceAccount configures a gateway's ServiceAccount.
type ServiceAccount struct {
	Annotations map[string]any `json:"annotations,omitempty"`
}

// DefaultPodDisruptionBudgetConfig toggles the default PodDisruptionBudgets.
type DefaultPodDisruptionBudgetConfig struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// DefaultResourcesConfig is the deprecated default resource requests for all workloads.
type DefaultResourcesConfig struct {
	Requests *ResourcesRequestsConfig `json:"requests,omitempty"`
}

// EgressGatewayConfig configures the egress gateway chart.
type EgressGatewayConfig struct {
	AutoscaleEnabled *bool                    `json:"autoscaleEnabled,omitempty"`
	AutoscaleMax     *int64                   `json:"autoscaleMax,omitempty"`
	AutoscaleMin     *int64                   `json:"autoscaleMin,omitempty"`
	Memory           *TargetUtilizationConfig `json:"memory,omitempty" deprecated:"true"`
	Cpu              *TargetUtilizationConfig `json:"cpu,omitempty" deprecated:"true"`
	CustomService    *bool                    `json:"customService,omitempty"`
	Enabled          *bool                    `json:"enabled,omitempty"`
	Env              map[string]any           `json:"env,omitempty"`
	Labels           map[string]string        `json:"labels,omitempty"`
	Name             string                   `json:"name,omitempty"`
	NodeSelector     map[string]any           `json:"nodeSelector,omitempty" deprecated:"true"`
	PodAnnotations   map[string]any           `json:"podAnnotations,omitempty" deprecated:"true"`
	// PodAntiAffinityLabelSelector entries are Kubernetes LabelSelector objects.
	PodAntiAffinityLabelSelector     []map[string]any `json:"podAntiAffinityLabelSelector,omitempty" deprecated:"true"`
	PodAntiAffinityTermLabelSelector []map[string]any `json:"podAntiAffinityTermLabelSelector,omitempty" deprecated:"true"`
	Ports                            []PortsConfig    `json:"ports,omitempty"`
	Resources                        *Resources       `json:"resources,omitempty" deprecated:"true"`
	SecretVolumes                    []SecretVolume   `json:"secretVolumes,omitempty"`
	ServiceAnnotations               map[string]any   `json:"serviceAnnotations,omitempty"`
	// Type is the Service type.
	Type string `json:"type,omitempty"`
	// Tolerations entries are Kubernetes Toleration objects.
	Tolerations           []corev1.Toleration `json:"tolerations,omitempty" deprecated:"true"`
	RollingMaxSurge       *intstr.IntOrString `json:"rollingMaxSurge,omitempty" deprecated:"true"`
	RollingMaxUnavailable *intstr.IntOrString `json:"rollingMaxUnavailable,omitempty" deprecated:"true"`
	ConfigVolumes         []map[string]any    `json:"configVolumes,omitempty"`
	AdditionalContainers  []corev1.Container  `json:"additionalContainers,omitempty"`
	RunAsRoot             *bool               `json:"runAsRoot,omitempty"`
	// InjectionTemplate names the sidecar-injector template for the gateway pod.
	InjectionTemplate string          `json:"injectionTemplate,omitempty"`
	ServiceAccount    *ServiceAccount `json:"serviceAccount,omitempty"`
	IpFamilies        []string        `json:"ipFamilies,omitempty"`
	IpFamilyPolicy    string          `json:"ipFamilyPolicy,omitempty"`
}

// GatewaysConfig holds the settings of the legacy gateway charts.
type GatewaysConfig struct {
	IstioEgressgateway  *EgressGatewayConfig  `json:"istio-egressgateway,omitempty"`
	Enabled             *bool                 `json:"enabled,omitempty"`
	IstioIngressgateway *IngressGatewayConfig `json:"istio-ingressgateway,omitempty"`
	// SecurityContext is a Kubernetes PodSecurityContext for gateway pods.
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`
	SeccompProfile  *corev1.SeccompProfile     `json:"seccompProfile,omitempty"`
}

// GlobalConfig holds values shared by all charts.
type GlobalConfig struct {
	Arch *ArchConfig `json:"arch,omitempty" deprecated:"true"`
	// CertSigners are signer names istiod may approve CSRs for.
	CertSigners                []string                          `json:"certSigners,omitempty"`
	ConfigValidation           *bool                             `json:"configValidation,omitempty"`
	DefaultNodeSelector        map[string]any                    `json:"defaultNodeSelector,omitempty" deprecated:"true"`
	DefaultPodDisruptionBudget *DefaultPodDisruptionBudgetConfig `json:"defaultPodDisruptionBudget,omitempty"`
	DefaultResources           *DefaultResourcesConfig           `json:"defaultResources,omitempty" deprecated:"true"`
	DefaultTolerations         []corev1.Toleration               `json:"defaultTolerations,omitempty" deprecated:"true"`
	Hub                        string                            `json:"hub,omitempty"`
	ImagePullPolicy            string                            `json:"imagePullPolicy,omitempty"`
	ImagePullSecrets           []string                          `json:"imagePullSecrets,omitempty"`
	IstioNamespace             string                            `json:"istioNamespace,omitempty"`
	LogAsJson                  *bool                             `json:"logAsJson,omitempty"`
	Logging                    *GlobalLoggingConfig              `json:"logging,omitempty"`
	MeshID                     string                            `json:"meshID,omitempty"`
	// MeshNetworks is the free-form mesh networks configuration.
	MeshNetworks                 map[string]any      `json:"meshNetworks,omitempty"`
	MultiCluster                 *MultiClusterConfig `json:"multiCluster,omitempty"`
	Network                      string              `json:"network,omitempty"`
	PodDNSSearchNamespaces       []string            `json:"podDNSSearchNamespaces,omitempty"`
	OmitSidecarInjectorConfigMap *bool               `json:"omitSidecarInjectorConfigMap,omitempty"`
	OperatorManageWebhooks       *bool               `json:"operatorManageWebhooks,omitempty"`
	PriorityClassName            string              `json:"priorityClassName,omitempty" deprecated:"true"`
	Proxy                        *ProxyConfig        `json:"proxy,omitempty"`
	ProxyInit                    *ProxyInitConfig    `json:"proxy_init,omitempty"`
	Sds                          *SDSConfig          `json:"sds,omitempty"`
	// Tag is the default image tag; YAML may write it as a string or a number.
	Tag     any           `json:"tag,omitempty" scalar:"string"`
	Variant string        `json:"variant,omitempty"`
	Tracer  *TracerConfig `json:"tracer,omitempty"`
	// RemotePilotAddress is the istiod address a remote cluster points at.
	RemotePilotAddress string        `json:"remotePilotAddress,omitempty"`
	Istiod             *IstiodConfig `json:"istiod,omitempty"`
	PilotCertProvider  string        `json:"pilotCertProvider,omitempty"`
	JwtPolicy          string        `json:"jwtPolicy,omitempty" deprecated:"true"`
	Sts                *STSConfig    `json:"sts,omitempty"`
	Revision           string        `json:"revision,omitempty"`
	MountMtlsCerts     *bool         `json:"mountMtlsCerts,omitempty"`
	CaAddress          string        `json:"caAddress,omitempty"`
	ExternalIstiod     *bool         `json:"externalIstiod,omitempty"`
	// ConfigCluster marks a remote cluster as the config cluster of an external istiod.
	ConfigCluster        *bool                 `json:"configCluster,omitempty"`
	CaName               string                `json:"caName,omitempty"`
	Platform             string                `json:"platform,omitempty"`
	IpFamilies           []string              `json:"ipFamilies,omitempty"`
	IpFamilyPolicy       string                `json:"ipFamilyPolicy,omitempty"`
	Waypoint             *WaypointConfig       `json:"waypoint,omitempty"`
	TrustBundleName      string                `json:"trustBundleName,omitempty"`
	NativeNftables       *bool                 `json:"nativeNftables,omitempty"`
	NetworkPolicy        *NetworkPolicyConfig  `json:"networkPolicy,omitempty"`
	ResourceScope        string                `json:"resourceScope,omitempty" enum:"undefined,all,cluster,namespace"`
	Agentgateway         *Agentgateway         `json:"agentgateway,omitempty"`
	EnableReaderRBAC     *bool                 `json:"enableReaderRBAC,omitempty"`
	ReaderServiceAccount *ReaderServiceAccount `json:"readerServiceAccount,omitempty"`
}

// Agentgateway configures the agentgateway data plane.
type Agentgateway struct {
	Image string `json:"image,omitempty"`
}

// ReaderServiceAccount names the service account granted read access.
type ReaderServiceAccount struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// STSConfig configures the security token service.
type STSConfig struct {
	ServicePort *int64 `json:"servicePort,omitempty"`
}

// IstiodConfig holds istiod-wide feature switches.
type IstiodConfig struct {
	EnableAnalysis *bool `json:"enableAnalysis,omitempty"`
}

// GlobalLoggingConfig sets log levels.
type GlobalLoggingConfig struct {
	// Level is a scope:level list, e.g. "default:info".
	Level string `json:"level,omitempty"`
}

// IngressGatewayConfig configures the ingress gateway chart.
type IngressGatewayConfig struct {
	AutoscaleEnabled         *bool                    `json:"autoscaleEnabled,omitempty"`
	AutoscaleMax             *int64                   `json:"autoscaleMax,omitempty"`
	AutoscaleMin             *int64                   `json:"autoscaleMin,omitempty"`
	Memory                   *TargetUtilizationConfig `json:"memory,omitempty" deprecated:"true"`
	Cpu                      *TargetUtilizationConfig `json:"cpu,omitempty" deprecated:"true"`
	CustomService            *bool                    `json:"customService,omitempty"`
	Enabled                  *bool                    `json:"enabled,omitempty"`
	Env                      map[string]any           `json:"env,omitempty"`
	Labels                   map[string]string        `json:"labels,omitempty"`
	LoadBalancerIP           string                   `json:"loadBalancerIP,omitempty"`
	LoadBalancerSourceRanges []string                 `json:"loadBalancerSourceRanges,omitempty"`
	Name                     string                   `json:"name,omitempty"`
	NodeSelector             map[string]any           `json:"nodeSelector,omitempty" deprecated:"true"`
	PodAnnotations           map[string]any           `json:"podAnnotations,omitempty" deprecated:"true"`
	// PodAntiAffinityLabelSelector entries are Kubernetes LabelSelector objects.
	PodAntiAffinityLabelSelector     []map[string]any `json:"podAntiAffinityLabelSelector,omitempty" deprecated:"true"`
	PodAntiAffinityTermLabelSelector []map[string]any `json:"podAntiAffinityTermLabelSelector,omitempty" deprecated:"true"`
	Ports                            []PortsConfig    `json:"ports,omitempty"`
	ReplicaCount                     *int64           `json:"replicaCount,omitempty" deprecated:"true"`
	// Resources is free-form here, unlike the other components' Resources.
	Resources          map[string]any `json:"resources,omitempty" deprecated:"true"`
	SecretVolumes      []SecretVolume `json:"secretVolumes,omitempty"`
	ServiceAnnotations map[string]any `json:"serviceAnnotations,omitempty"`
	// Type is the Service type.
	Type                  string              `json:"type,omitempty"`
	RollingMaxSurge       *intstr.IntOrString `json:"rollingMaxSurge,omitempty" deprecated:"true"`
	RollingMaxUnavailable *intstr.IntOrString `json:"rollingMaxUnavailable,omitempty" deprecated:"true"`
	ExternalTrafficPolicy string              `json:"externalTrafficPolicy,omitempty"`
	// Tolerations entries are Kubernetes Toleration objects.
	Tolerations          []corev1.Toleration `json:"tolerations,omitempty" deprecated:"true"`
	IngressPorts         []map[string]any    `json:"ingressPorts,omitempty"`
	AdditionalContainers []corev1.Container  `json:"additionalContainers,omitempty"`
	ConfigVolumes        []map[string]any    `json:"configVolumes,omitempty"`
	RunAsRoot            *bool               `json:"runAsRoot,omitempty"`
	// InjectionTemplate names the sidecar-injector template for the gateway pod.
	InjectionTemplate string          `json:"injectionTemplate,omitempty"`
	ServiceAccount    *ServiceAccount `json:"serviceAccount,omitempty"`
	IpFamilies        []string        `json:"ipFamilies,omitempty"`
	IpFamilyPolicy    string          `json:"ipFamilyPolicy,omitempty"`
}

// MultiClusterConfig configures multi-cluster meshes.
type MultiClusterConfig struct {
	Enabled            *bool  `json:"enabled,omitempty"`
	ClusterName        string `json:"clusterName,omitempty"`
	GlobalDomainSuffix string `json:"globalDomainSuffix,omitempty"`
	IncludeEnvoyFilter *bool  `json:"includeEnvoyFilter,omitempty"`
}

// OutboundTrafficPolicyConfig selects how sidecars treat unknown destinations.
type OutboundTrafficPolicyConfig struct {
	Mode string `json:"mode,omitempty" enum:"ALLOW_ANY,REGISTRY_ONLY"`
}

// PilotConfig configures istiod.
type PilotConfig struct {
	Enabled          *bool  `json:"enabled,omitempty"`
	AutoscaleEnabled *bool  `json:"autoscaleEnabled,omitempty"`
	AutoscaleMin     *int64 `json:"autoscaleMin,omitempty"`
	AutoscaleMax     *int64 `json:"autoscaleMax,omitempty"`
	// AutoscaleBehavior is a Kubernetes HorizontalPodAutoscalerBehavior object.
	AutoscaleBehavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"autoscaleBehavior,omitempty"`
	ReplicaCount      *int64                                         `json:"replicaCount,omitempty" deprecated:"true"`
	Image             string                                         `json:"image,omitempty"`
	// TraceSampling is the trace sampling percentage.
	TraceSampling *float64                 `json:"traceSampling,omitempty"`
	Resources     *Resources               `json:"resources,omitempty" deprecated:"true"`
	Cpu           *TargetUtilizationConfig `json:"cpu,omitempty" deprecated:"true"`
	NodeSelector  map[string]string        `json:"nodeSelector,omitempty" deprecated:"true"`
	// KeepaliveMaxServerConnectionAge is a duration string such as "30m".
	KeepaliveMaxServerConnectionAge string         `json:"keepaliveMaxServerConnectionAge,omitempty"`
	DeploymentLabels                map[string]any `json:"deploymentLabels,omitempty"`
	PodLabels                       map[string]any `json:"podLabels,omitempty"`
	// ConfigMap toggles the mesh-config ConfigMap.
	ConfigMap *bool          `json:"configMap,omitempty"`
	Env       map[string]any `json:"env,omitempty"`
	// Affinity is a Kubernetes Affinity object.
	Affinity                  *corev1.Affinity    `json:"affinity,omitempty"`
	RollingMaxSurge           *intstr.IntOrString `json:"rollingMaxSurge,omitempty" deprecated:"true"`
	RollingMaxUnavailable     *intstr.IntOrString `json:"rollingMaxUnavailable,omitempty" deprecated:"true"`
	Tolerations               []corev1.Toleration `json:"tolerations,omitempty" deprecated:"true"`
	PodAnnotations            map[string]any      `json:"podAnnotations,omitempty" deprecated:"true"`
	ServiceAnnotations        map[string]any      `json:"serviceAnnotations,omitempty"`
	ServiceAccountAnnotations map[string]any      `json:"serviceAccountAnnotations,omitempty"`
	// JwksResolverExtraRootCA is extra PEM roots for fetching JWKS.
	JwksResolverExtraRootCA string                 `json:"jwksResolverExtraRootCA,omitempty"`
	Hub                     string                 `json:"hub,omitempty"`
	Tag                     any                    `json:"tag,omitempty" scalar:"string"`
	Variant                 string                 `json:"variant,omitempty"`
	SeccompProfile          *corev1.SeccompProfile `json:"seccompProfile,omitempty"`
	// TopologySpreadConstraints entries are Kubernetes TopologySpreadConstraint objects.
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	ExtraContainerArgs        []string                          `json:"extraContainerArgs,omitempty"`
	VolumeMounts              []corev1.VolumeMount              `json:"volumeMounts,omitempty"`
	Volumes                   []corev1.Volume                   `json:"volumes,omitempty"`
	IpFamilies                []string                          `json:"ipFamilies,omitempty"`
	IpFamilyPolicy            string                            `json:"ipFamilyPolicy,omitempty"`
	Memory                    *TargetUtilizationConfig          `json:"memory,omitempty" deprecated:"true"`
	Cni                       *CNIUsageConfig                   `json:"cni,omitempty"`
	Taint                     *PilotTaintControllerConfig       `json:"taint,omitempty"`
	TrustedZtunnelNamespace   string                            `json:"trustedZtunnelNamespace,omitempty"`
	IstiodRemote              *IstiodRemoteConfig               `json:"istiodRemote,omitempty"`
	// EnvVarFrom entries are whole Kubernetes EnvVar objects appended to istiod's env.
	EnvVarFrom       []corev1.EnvVar `json:"envVarFrom,omitempty"`
	CrlConfigMapName string          `json:"crlConfigMapName,omitempty"`
}

// PilotTaintControllerConfig configures istiod's node-taint controller.
type PilotTaintControllerConfig struct {
	Enabled   *bool  `json:"enabled,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// PilotIngressConfig configures istiod's Kubernetes Ingress support.
type PilotIngressConfig struct {
	IngressService        string `json:"ingressService,omitempty"`
	IngressControllerMode string `json:"ingressControllerMode,omitempty" enum:"UNSPECIFIED,DEFAULT,STRICT,OFF"`
	IngressClass          string `json:"ingressClass,omitempty"`
}

// PilotPolicyConfig toggles policy checks.
type PilotPolicyConfig struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// TelemetryConfig configures telemetry.
type TelemetryConfig struct {
	Enabled *bool              `json:"enabled,omitempty"`
	V2      *TelemetryV2Config `json:"v2,omitempty"`
}

// TelemetryV2Config configures in-proxy telemetry.
type TelemetryV2Config struct {
	Enabled     *bool                         `json:"enabled,omitempty"`
	Prometheus  *TelemetryV2PrometheusConfig  `json:"prometheus,omitempty"`
	Stackdriver *TelemetryV2StackDriverConfig `json:"stackdriver,omitempty"`
}

// TelemetryV2PrometheusConfig toggles Prometheus metrics.
type TelemetryV2PrometheusConfig struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// TelemetryV2StackDriverConfig toggles Stackdriver telemetry.
type TelemetryV2StackDriverConfig struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// PortsConfig is one gateway Service port.
type PortsConfig struct {
	Name       string `json:"name,omitempty"`
	Port       *int64 `json:"port,omitempty"`
	NodePort   *int64 `json:"nodePort,omitempty"`
	TargetPort *int64 `json:"targetPort,omitempty"`
	Protocol   string `json:"protocol,omitempty"`
}

// ProxyConfig configures the injected sidecar proxy.
type ProxyConfig struct {
	// AutoInject is the injection policy: "enabled" or "disabled".
	AutoInject    string `json:"autoInject,omitempty"`
	ClusterDomain string `json:"clusterDomain,omitempty"`
	// ComponentLogLevel is an Envoy component:level list.
	ComponentLogLevel   string `json:"componentLogLevel,omitempty"`
	EnableCoreDump      *bool  `json:"enableCoreDump,omitempty" deprecated:"true"`
	ExcludeInboundPorts string `json:"excludeInboundPorts,omitempty"`
	ExcludeIPRanges     string `json:"excludeIPRanges,omitempty"`
	Image               string `json:"image,omitempty"`
	IncludeIPRanges     string `json:"includeIPRanges,omitempty"`
	LogLevel            string `json:"logLevel,omitempty"`
	OutlierLogPath      string `json:"outlierLogPath,omitempty"`
	Privileged          *bool  `json:"privileged,omitempty"`
	// ReadinessInitialDelaySeconds and the two fields after it tune the proxy readiness probe.
	ReadinessInitialDelaySeconds *int64                 `json:"readinessInitialDelaySeconds,omitempty"`
	ReadinessPeriodSeconds       *int64                 `json:"readinessPeriodSeconds,omitempty"`
	ReadinessFailureThreshold    *int64                 `json:"readinessFailureThreshold,omitempty"`
	SeccompProfile               *corev1.SeccompProfile `json:"seccompProfile,omitempty"`
	StartupProbe                 *StartupProbe          `json:"startupProbe,omitempty"`
	StatusPort                   *int64                 `json:"statusPort,omitempty"`
	Resources                    *Resources             `json:"resources,omitempty" deprecated:"true"`
	Tracer                       string                 `json:"tracer,omitempty" enum:"zipkin,lightstep,datadog,stackdriver,openCensusAgent,none"`
	ExcludeOutboundPorts         string                 `json:"excludeOutboundPorts,omitempty"`
	// Lifecycle is a Kubernetes Lifecycle object for the proxy container.
	Lifecycle                       *corev1.Lifecycle `json:"lifecycle,omitempty"`
	HoldApplicationUntilProxyStarts *bool             `json:"holdApplicationUntilProxyStarts,omitempty" deprecated:"true"`
	IncludeInboundPorts             string            `json:"includeInboundPorts,omitempty"`
	IncludeOutboundPorts            string            `json:"includeOutboundPorts,omitempty"`
}

// StartupProbe configures the proxy startup probe.
type StartupProbe struct {
	Enabled          *bool  `json:"enabled,omitempty"`
	FailureThreshold *int64 `json:"failureThreshold,omitempty"`
}

// ProxyInitConfig configures the traffic-redirection init container.
type ProxyInitConfig struct {
	Image     string     `json:"image,omitempty"`
	Resources *Resources `json:"resources,omitempty" deprecated:"true"`
}

// ResourcesRequestsConfig holds CPU and memory quantity strings.
type ResourcesRequestsConfig struct {
	Cpu    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// SDSConfig is the deprecated secret discovery service configuration.
type SDSConfig struct {
	Token map[string]any `json:"token,omitempty" deprecated:"true"`
}

// SecretVolume mounts a Secret into a gateway pod.
type SecretVolume struct {
	MountPath  string `json:"mountPath,omitempty"`
	Name       string `json:"name,omitempty"`
	SecretName string `json:"secretName,omitempty"`
}

// SidecarInjectorConfig configures the sidecar injector webhook.
type SidecarInjectorConfig struct {
	EnableNamespacesByDefault *bool  `json:"enableNamespacesByDefault,omitempty"`
	ReinvocationPolicy        string `json:"reinvocationPolicy,omitempty"`
	// NeverInjectSelector entries are Kubernetes LabelSelector objects.
	NeverInjectSelector  []metav1.LabelSelector `json:"neverInjectSelector,omitempty"`
	AlwaysInjectSelector []metav1.LabelSelector `json:"alwaysInjectSelector,omitempty"`
	RewriteAppHTTPProbe  *bool                  `json:"rewriteAppHTTPProbe,omitempty"`
	InjectedAnnotations  map[string]any         `json:"injectedAnnotations,omitempty"`
	InjectionURL         string                 `json:"injectionURL,omitempty"`
	// Templates maps template names to injection template text.
	Templates        map[string]any `json:"templates,omitempty"`
	DefaultTemplates []string       `json:"defaultTemplates,omitempty"`
}

// TracerConfig holds per-tracer settings.
type TracerConfig struct {
	Datadog     *TracerDatadogConfig     `json:"datadog,omitempty"`
	Lightstep   *TracerLightStepConfig   `json:"lightstep,omitempty"`
	Zipkin      *TracerZipkinConfig      `json:"zipkin,omitempty"`
	Stackdriver *TracerStackdriverConfig `json:"stackdriver,omitempty"`
}

// TracerDatadogConfig configures the Datadog tracer.
type TracerDatadogConfig struct {
	Address string `json:"address,omitempty"`
}

// TracerLightStepConfig configures the LightStep tracer.
type TracerLightStepConfig struct {
	Address     string `json:"address,omitempty"`
	AccessToken string `json:"accessToken,omitempty"`
}

// TracerZipkinConfig configures the Zipkin tracer.
type TracerZipkinConfig struct {
	Address string `json:"address,omitempty"`
}

// TracerStackdriverConfig configures the Stackdriver tracer.
type TracerStackdriverConfig struct {
	Debug                    *bool  `json:"debug,omitempty"`
	MaxNumberOfAttributes    *int64 `json:"maxNumberOfAttributes,omitempty"`
	MaxNumberOfAnnotations   *int64 `json:"maxNumberOfAnnotations,omitempty"`
	MaxNumberOfMessageEvents *int64 `json:"maxNumberOfMessageEvents,omitempty"`
}

// BaseConfig configures the base chart (CRDs and cluster-wide resources).
type BaseConfig struct {
	EnableCRDTemplates *bool `json:"enableCRDTemplates,omitempty"`
	// ExcludedCRDs are CRD names the base chart leaves out.
	ExcludedCRDs          []string `json:"excludedCRDs,omitempty"`
	ValidationURL         string   `json:"validationURL,omitempty"`
	EnableIstioConfigCRDs *bool    `json:"enableIstioConfigCRDs,omitempty"`
	ValidateGateway       *bool    `json:"validateGateway,omitempty"`
	ValidationCABundle    string   `json:"validationCABundle,omitempty"`
}

// IstiodRemoteConfig configures a cluster whose istiod runs elsewhere.
type IstiodRemoteConfig struct {
	InjectionURL               string `json:"injectionURL,omitempty"`
	InjectionPath              string `json:"injectionPath,omitempty"`
	InjectionCABundle          string `json:"injectionCABundle,omitempty"`
	Enabled                    *bool  `json:"enabled,omitempty"`
	EnabledLocalInjectorIstiod *bool  `json:"enabledLocalInjectorIstiod,omitempty"`
}

// Values is the root of the Helm values schema.
type Values struct {
	Cni      *CNIConfig      `json:"cni,omitempty"`
	Gateways *GatewaysConfig `json:"gateways,omitempty"`
	Global   *GlobalConfig   `json:"global,omitempty"`
	Pilot    *PilotConfig    `json:"pilot,omitempty"`
	// Ztunnel holds the ztunnel chart's values: free-form, in the shapes the chart's
	// defaults give them.
	Ztunnel                any                    `json:"ztunnel,omitempty" schema:"ztunnel"`
	Telemetry              *TelemetryConfig       `json:"telemetry,omitempty"`
	SidecarInjectorWebhook *SidecarInjectorConfig `json:"sidecarInjectorWebhook,omitempty"`
	IstioCni               *CNIUsageConfig        `json:"istioCni,omitempty" deprecated:"true"`
	Revision               string                 `json:"revision,omitempty"`
	OwnerName              string                 `json:"ownerName,omitempty"`
	// MeshConfig is the mesh configuration, checked as spec.meshConfig.
	MeshConfig   any                 `json:"meshConfig,omitempty" schema:"meshconfig"`
	Base         *BaseConfig         `json:"base,omitempty"`
	IstiodRemote *IstiodRemoteConfig `json:"istiodRemote,omitempty" deprecated:"true"`
	// RevisionTags are tags that point at this revision.
	RevisionTags         []string            `json:"revisionTags,omitempty"`
	DefaultRevision      string              `json:"defaultRevision,omitempty"`
	Profile              string              `json:"profile,omitempty"`
	CompatibilityVersion string              `json:"compatibilityVersion,omitempty" scalar:"string"`
	Experimental         *ExperimentalConfig `json:"experimental,omitempty"`
	// GatewayClasses holds per-GatewayClass customization: class name -> kind -> overlay.
	GatewayClasses any `json:"gatewayClasses,omitempty" schema:"gatewayclasses"`
}

// ExperimentalConfig holds experimental feature switches.
type ExperimentalConfig struct {
	StableValidationPolicy *bool `json:"stableValidationPolicy,omitempty"`
}

// WaypointConfig configures the waypoint proxies istiod deploys.
type WaypointConfig struct {
	Resources *Resources `json:"resources,omitempty"`
	// Affinity is a Kubernetes Affinity object.
	Affinity                  *corev1.Affinity                  `json:"affinity,omitempty"`
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	NodeSelector              map[string]string                 `json:"nodeSelector,omitempty"`
	// Toleration entries are Kubernetes Toleration objects (the key is singular).
	Toleration []corev1.Toleration `json:"toleration,omitempty"`
}

// NetworkPolicyConfig toggles the NetworkPolicies the charts render.
type NetworkPolicyConfig struct {
	Enabled *bool `json:"enabled,omitempty"`
}
