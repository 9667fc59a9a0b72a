package action

import (
	"bytes"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/link/readerchart"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// The values of --type and --auth-type.
const (
	SecretTypeRemote = string(link.TypeRemote)
	SecretTypeConfig = string(link.TypeConfig)
	AuthBearerToken  = "bearer-token"
	AuthPlugin       = "plugin"
)

// tokenWait bounds the wait for the token controller to fill a new token Secret.
const tokenWait = 10 * time.Second

// CreateRemoteSecret makes the link another cluster's istiod reads this cluster with (the
// cluster of the connection flags): upstream's create-remote-secret, which prints the Secret,
// or with ApplyTo one that writes it into that cluster with a token of its own, and on the
// next run rotates that token.
type CreateRemoteSecret struct {
	*Config
	// Name is the cluster ID (--name); "" takes the kube-system Namespace's UID.
	Name string
	// Type is remote (default) or config; AuthType bearer-token (default) or plugin.
	Type, AuthType           string
	AuthPluginName           string
	AuthPluginConfig         map[string]string
	ServiceAccount           string
	CreateServiceAccount     bool
	Server, TLSServerName    string
	SecretName, ManifestsDir string
	// ApplyTo is the kubeconfig context of the cluster to write the Secret into.
	ApplyTo string
	// Labels and Annotations are put on the Secret besides upstream's (a fleet's).
	Labels, Annotations map[string]string
	// Hints are annotations put on a Secret this run writes that one Keep leaves need not
	// carry: a fleet's context name, one kubeconfig's word for the cluster (the identity it
	// records goes in Annotations), so another name for the same cluster rewrites nothing.
	Hints map[string]string
	// Keep leaves a Secret ApplyTo holds already as it is while it carries Labels, reaches
	// the server the new one would, and its token still authenticates: a fleet install
	// that changes nothing writes nothing, and issues no token.
	Keep bool
	// Target, when set, is ApplyTo's client (a fleet's member's, connected already).
	// WriteGate, when set, is passed before the write into ApplyTo's cluster and released
	// after it: a fleet's link waits there for that cluster's install, and takes its turn
	// among the run's writers of that cluster, having done the rest (reads, the reader's
	// token) beside them. Its error fails the run (the token made for it deleted).
	Target    *kube.Client
	WriteGate func(context.Context) (release func(), err error)
}

// RemoteSecretPlan is what a run writes, decided from reads only.
type RemoteSecretPlan struct {
	// ClusterID is the ID the Secret carries; Secret its namespace/name; Server what its
	// kubeconfig reaches; ServiceAccount whose token it carries (namespace/name).
	ClusterID, Secret, Server, ServiceAccount string
	// Create lists the reader's objects that are missing and will be created.
	Create []string
	// Rotate says ApplyTo finds the Secret there already: its token is replaced.
	Rotate bool
	// Warnings are worth saying before the run (a loopback server, a CA that differs).
	Warnings []string

	typ       link.Type
	namespace string
	source    *kube.Client
	target    *kube.Client
	targetID  string
	ca        []byte
	create    []*unstructured.Unstructured
	// old are the token Secrets an earlier --apply-to made for the Secret being replaced:
	// deleted once the new token works. shared is its token when it was not made for it
	// alone (upstream's shared one): kept, as other links may use it.
	old    []*link.TokenSecret
	shared *link.TokenSecret
	// existing are the links of the Secret ApplyTo holds already; existingLabels its labels.
	existing                    []link.Link
	existingLabels, existingAnn map[string]string
}

// RemoteSecretResult is what a run did.
type RemoteSecretResult struct {
	// YAML is the Secret as upstream prints it, credentials included (without ApplyTo).
	YAML []byte
	// With ApplyTo: where the Secret went, whether it was created or replaced, who it
	// authenticates as there, the token it carries and the previous tokens.
	Secret, Context, Identity string
	Created                   bool
	// Unchanged: with Keep, the Secret there was kept as it was (nothing written).
	Unchanged bool
	Token     TokenInfo
	// Deleted are the previous tokens' Secrets, deleted (they no longer authenticate);
	// Kept the previous one left because other links may use it.
	Deleted []string
	Kept    string
	// Notes are worth saying (on stderr): the CA written is not the token Secret's.
	Notes []string
}

// TokenInfo says what kind of token a link carries and until when (never a token).
type TokenInfo struct {
	// Secret is its token Secret (Secret/namespace/name) in the cluster it authenticates to.
	Secret string
	Kind   string
	// Expires is when it stops working (nil: it does not expire).
	Expires *time.Time
}

func (a *CreateRemoteSecret) typ() link.Type {
	if a.Type == SecretTypeConfig {
		return link.TypeConfig
	}
	return link.TypeRemote
}

// namespace is where the ServiceAccount and the Secret live: -n, else the istio namespace
// (never the context's namespace: istiod reads link Secrets from its own namespace only).
func (a *CreateRemoteSecret) namespace() string {
	if a.Kube != nil && a.Kube.Namespace != "" {
		return a.Kube.Namespace
	}
	return a.istioNamespace()
}

func (a *CreateRemoteSecret) validate() error {
	switch {
	case a.Type != "" && a.Type != SecretTypeRemote && a.Type != SecretTypeConfig:
		return &UsageError{Err: fmt.Errorf("--type %q: use %s or %s", a.Type, SecretTypeRemote, SecretTypeConfig)}
	case a.AuthType != "" && a.AuthType != AuthBearerToken && a.AuthType != AuthPlugin:
		return &UsageError{Err: fmt.Errorf("--auth-type %q: use %s or %s", a.AuthType, AuthBearerToken, AuthPlugin)}
	case a.AuthType == AuthPlugin && a.AuthPluginName == "":
		return &UsageError{Err: fmt.Errorf("--auth-type=%s needs --auth-plugin-name", AuthPlugin)}
	case a.AuthType != AuthPlugin && (a.AuthPluginName != "" || len(a.AuthPluginConfig) > 0):
		return &UsageError{Err: fmt.Errorf("--auth-plugin-name and --auth-plugin-config need --auth-type=%s", AuthPlugin)}
	case a.Name != "" && len(validation.IsDNS1123Label(a.Name)) > 0:
		return &UsageError{Err: fmt.Errorf("%s is not a valid DNS 1123 label", a.Name)}
	}
	return nil
}

func (a *CreateRemoteSecret) serviceAccount() string {
	switch {
	case a.ServiceAccount != "":
		return a.ServiceAccount
	case a.typ() == link.TypeConfig:
		return ownership.ConfigServiceAccount
	}
	return ownership.ReaderServiceAccount
}

// Plan reads this cluster (and ApplyTo's) and decides: the cluster ID, the Secret, the
// server and CA its kubeconfig gets, the reader objects to create, and with ApplyTo what the
// target holds already. It writes nothing.
func (a *CreateRemoteSecret) Plan(ctx context.Context) (*RemoteSecretPlan, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	source, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	p := &RemoteSecretPlan{typ: a.typ(), namespace: a.namespace(), source: source, ClusterID: a.Name}
	if p.ClusterID == "" {
		if p.ClusterID, err = link.ClusterUID(ctx, source); err != nil {
			return nil, err
		}
	}
	p.Secret = p.namespace + "/" + link.SecretName(p.typ, p.ClusterID)
	sa := a.serviceAccount()
	p.ServiceAccount = p.namespace + "/" + sa
	if err := a.planReader(ctx, p, sa); err != nil {
		return nil, err
	}
	if err := a.planServer(p); err != nil {
		return nil, err
	}
	if a.ApplyTo != "" {
		if err := a.planTarget(ctx, p, sa); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// planReader finds what of the ServiceAccount (and, for the reader, its RBAC) is missing.
func (a *CreateRemoteSecret) planReader(ctx context.Context, p *RemoteSecretPlan, sa string) error {
	exists, err := link.ServiceAccountExists(ctx, p.source, p.namespace, sa)
	if err != nil {
		return err
	}
	if sa != ownership.ReaderServiceAccount {
		if !exists {
			return fmt.Errorf("failed retrieving service account %s.%s required for creating the remote secret: not found; create it (--create-service-account creates only %s), or install Istio there first", sa, p.namespace, ownership.ReaderServiceAccount)
		}
		return nil
	}
	if !exists && !a.CreateServiceAccount {
		return fmt.Errorf("failed retrieving service account %s.%s required for creating the remote secret (hint: try installing a minimal Istio profile on the cluster first, or run with '--create-service-account=true'): not found", sa, p.namespace)
	}
	if !a.CreateServiceAccount {
		return nil
	}
	reader, err := readerchart.Render(a.ManifestsDir, p.namespace, a.Version)
	if err != nil {
		return err
	}
	if p.create, err = reader.Missing(ctx, p.source); err != nil {
		return err
	}
	for _, o := range p.create {
		p.Create = append(p.Create, ref.Of(o).String())
	}
	return nil
}

// planServer picks the server and the CA the kubeconfig gets: --server, else the address
// istioctl reaches this cluster at; the CA this kubeconfig trusts for that server (the token
// Secret's ca.crt otherwise, as upstream, and for a --server of its own).
func (a *CreateRemoteSecret) planServer(p *RemoteSecretPlan) error {
	p.Server = p.source.Config.Host
	if a.Server != "" {
		p.Server = a.Server
	}
	if a.Server == "" && link.Loopback(p.Server) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("server in Kubeconfig is %s. This is likely not reachable from inside the cluster, if you're using Kubernetes in Docker, pass --server with the container IP for the API Server", p.Server))
	}
	if a.Server != "" && a.Server != p.source.Config.Host {
		return nil
	}
	rc := rest.CopyConfig(p.source.Config)
	if err := rest.LoadTLSFiles(rc); err != nil {
		return fmt.Errorf("reading the CA your kubeconfig names for %s: %w", p.Server, err)
	}
	p.ca = rc.CAData
	return nil
}

// planTarget reads ApplyTo's cluster: its ID, the link Secrets there, and, when the
// Secret is there already, which of this cluster's token Secrets it uses.
func (a *CreateRemoteSecret) planTarget(ctx context.Context, p *RemoteSecretPlan, sa string) error {
	var err error
	if p.target = a.Target; p.target == nil {
		if p.target, err = a.contextClient(ctx, a.ApplyTo); err != nil {
			return fmt.Errorf("--apply-to %s: %w", a.ApplyTo, err)
		}
	}
	if p.targetID, err = link.ClusterUID(ctx, p.target); err != nil {
		return fmt.Errorf("--apply-to %s: %w", a.ApplyTo, err)
	}
	if sourceID, err := link.ClusterUID(ctx, p.source); err != nil {
		return err
	} else if sourceID == p.targetID {
		return &UsageError{Err: fmt.Errorf("--apply-to %s is the cluster the credentials are for: a cluster's istiod reads itself without a link; name another context", a.ApplyTo)}
	}
	secrets, err := link.SecretsIn(ctx, p.target, p.namespace)
	if err != nil {
		return fmt.Errorf("--apply-to %s: %w", a.ApplyTo, err)
	}
	name := link.SecretName(p.typ, p.ClusterID)
	var existing []link.Link
	for i := range secrets {
		for _, l := range link.FromSecret(&secrets[i]) {
			switch {
			case l.Name == name:
				existing = append(existing, l)
				p.existingLabels, p.existingAnn = secrets[i].GetLabels(), secrets[i].GetAnnotations()
			case p.typ == link.TypeRemote && l.Type == link.TypeRemote && l.ClusterID == p.ClusterID:
				return fmt.Errorf("--apply-to %s: Secret %s there already carries cluster ID %s: istiod reads only one Secret per cluster ID, so a second would be ignored or win by chance; delete it (kubectl --context %s delete secret -n %s %s) and run again",
					a.ApplyTo, l.Secret(), p.ClusterID, a.ApplyTo, l.Namespace, l.Name)
			}
		}
	}
	p.Rotate, p.existing = len(existing) > 0, existing
	if !p.Rotate {
		return nil
	}
	tokens, err := link.TokenSecrets(ctx, p.source, p.namespace, sa)
	if err != nil {
		return err
	}
	for _, t := range tokens {
		switch {
		case !usedBy(existing, t.Token()):
		case t.ForCluster == p.targetID:
			p.old = append(p.old, t)
		default:
			p.shared = t
		}
	}
	return nil
}

func usedBy(links []link.Link, token []byte) bool {
	for i := range links {
		if links[i].SameToken(token) {
			return true
		}
	}
	return false
}

// contextClient connects to another context of the same kubeconfig, with the same
// timeouts (and none of the flags that override the current context's server or user).
func (c *Config) contextClient(ctx context.Context, name string) (*kube.Client, error) {
	f := &kubeflags.Flags{Context: name, Timeout: kubeflags.DefaultTimeout}
	if c.Kube != nil {
		f.Kubeconfig, f.Timeout, f.RequestTimeout = c.Kube.Kubeconfig, c.Kube.Timeout, c.Kube.RequestTimeout
	}
	client, err := kube.NewClient(f, ownership.KubeOptions()...)
	if err != nil {
		return nil, err
	}
	client.GuardWrites()
	if _, err := client.ServerVersion(ctx); err != nil {
		return nil, err
	}
	return client, nil
}

// writeTo writes the Secret into ApplyTo's cluster holding that cluster's lock, as every
// writer there does: the lock is the target's (its Lease, its --lock-timeout wait), not
// this cluster's, which the reads and the reader's token do not need.
func (a *CreateRemoteSecret) writeTo(ctx context.Context, p *RemoteSecretPlan, secret *corev1.Secret) error {
	if a.WriteGate != nil {
		release, err := a.WriteGate(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	return a.write(ctx, p.target, event.Discard{}, lockRun{action: "create-remote-secret", namespace: p.namespace}, func(ctx context.Context) error {
		return link.Write(ctx, p.target, secret)
	})
}

// Run carries out the plan (nil: it plans first). Without ApplyTo it creates what the
// reader lacks, finds or creates the ServiceAccount's token Secret and returns the Secret as
// upstream prints it. With ApplyTo it issues a token for that cluster alone, writes the
// Secret there, checks the new token authenticates, and only then deletes the tokens earlier
// runs made for it.
func (a *CreateRemoteSecret) Run(ctx context.Context, p *RemoteSecretPlan) (*RemoteSecretResult, error) {
	var err error
	if p == nil {
		if p, err = a.Plan(ctx); err != nil {
			return nil, err
		}
	}
	if a.keeps(ctx, p) {
		return &RemoteSecretResult{Secret: p.Secret, Context: a.ApplyTo, Unchanged: true}, nil
	}
	// A run of the protocol that takes no lock in this cluster (it never did): it creates
	// only what the reader lacks and a token of its own; ApplyTo's write takes that
	// cluster's lock.
	r := a.begin(p.source, nil, false)
	r.reached = true
	var res *RemoteSecretResult
	err = r.withoutLock(ctx, func(ctx context.Context) error {
		var err error
		res, err = a.carryOut(ctx, p)
		return err
	})
	return res, err
}

// carryOut writes what the plan says: the reader's objects and a token here, the Secret
// into ApplyTo's cluster, then the previous tokens go.
func (a *CreateRemoteSecret) carryOut(ctx context.Context, p *RemoteSecretPlan) (*RemoteSecretResult, error) {
	var err error
	if err := link.Create(ctx, p.source, p.namespace, p.create); err != nil {
		return nil, err
	}
	sa := a.serviceAccount()
	var tok *link.TokenSecret
	fresh := a.ApplyTo != "" && a.AuthType != AuthPlugin && a.SecretName == ""
	if fresh {
		// Not cancelled by Ctrl-C: a create cut off in flight may still land, and a token
		// the run does not know it made is one it cannot take back (undo).
		tok, err = link.NewTokenSecret(context.WithoutCancel(ctx), p.source, p.namespace, sa, p.targetID)
	} else {
		tok, _, err = link.SharedTokenSecret(ctx, p.source, p.namespace, sa, a.SecretName)
	}
	if err != nil {
		return nil, fmt.Errorf("could not get access token to read resources from local kube-apiserver: %w", err)
	}
	// A token issued for this run alone goes again when the run fails after it.
	undo := func() {
		if fresh {
			_ = tok.Delete(context.WithoutCancel(ctx), p.source, false)
		}
	}
	if err := tok.Wait(ctx, p.source, tokenWait); err != nil {
		undo()
		return nil, fmt.Errorf("could not get access token to read resources from local kube-apiserver: %w", err)
	}
	ca := tok.CA()
	var notes []string
	if len(p.ca) > 0 && !bytes.Equal(p.ca, ca) {
		// Behind a proxy (Rancher, vcluster) the server presents another CA than the one the
		// cluster gives its pods (upstream #51376): the kubeconfig's works from here.
		ca = p.ca
		notes = append(notes, fmt.Sprintf("the CA written is the one your kubeconfig trusts for %s, not the ca.crt of the token Secret (they differ)", p.Server))
	}
	auth := link.Auth{Token: tok.Token()}
	if a.AuthType == AuthPlugin {
		auth = link.Auth{PluginName: a.AuthPluginName, PluginConfig: a.AuthPluginConfig}
	}
	kc, err := link.Kubeconfig(p.ClusterID, p.Server, a.TLSServerName, ca, auth)
	if err != nil {
		undo()
		return nil, err
	}
	secret := link.Secret(p.typ, p.ClusterID, p.namespace, kc)
	for k, v := range a.Labels {
		secret.Labels[k] = v
	}
	for k, v := range a.Hints {
		secret.Annotations[k] = v
	}
	for k, v := range a.Annotations {
		secret.Annotations[k] = v
	}
	if a.ApplyTo == "" {
		y, err := link.Encode(secret)
		return &RemoteSecretResult{YAML: y, Notes: notes}, err
	}
	res := &RemoteSecretResult{Secret: p.Secret, Context: a.ApplyTo, Created: !p.Rotate, Notes: notes,
		Token: TokenInfo{Secret: tok.Describe(), Kind: "a long-lived ServiceAccount token (it does not expire; it stops working when its token Secret is deleted)"}}
	if a.AuthType == AuthPlugin {
		res.Token = TokenInfo{Kind: "the auth provider plugin " + a.AuthPluginName + " (istiod runs it; no token is stored)"}
	}
	if exp, ok := link.TokenExpiry(tok.Token()); ok && a.AuthType != AuthPlugin {
		res.Token.Kind, res.Token.Expires = "a bound ServiceAccount token", &exp
	}
	if err := a.writeTo(ctx, p, secret); err != nil {
		undo()
		return nil, fmt.Errorf("--apply-to %s: %w", a.ApplyTo, err)
	}
	if a.AuthType != AuthPlugin {
		if res.Identity, err = link.Authenticate(ctx, secret); err != nil {
			return res, fmt.Errorf("the Secret is written to %s but its new token does not authenticate, so the previous tokens are kept: %w", a.ApplyTo, err)
		}
	}
	for _, t := range p.old {
		if t.Name == tok.Name {
			continue
		}
		if err := t.Delete(ctx, p.source, false); err != nil {
			return res, err
		}
		res.Deleted = append(res.Deleted, t.Describe())
	}
	if p.shared != nil && p.shared.Name != tok.Name {
		res.Kept = p.shared.Describe()
	}
	return res, nil
}

// keeps says, with Keep, that the Secret ApplyTo holds is the one a run would write, bar
// its token, and that token still authenticates: one link, for this cluster ID, with the
// labels asked for, reaching the same server.
func (a *CreateRemoteSecret) keeps(ctx context.Context, p *RemoteSecretPlan) bool {
	if !a.Keep || len(p.existing) != 1 || len(p.create) > 0 || a.AuthType == AuthPlugin {
		return false
	}
	l := p.existing[0]
	if l.ClusterID != p.ClusterID || l.Server() != p.Server {
		return false
	}
	if !holds(p.existingLabels, a.Labels) || !holds(p.existingAnn, a.Annotations) {
		return false
	}
	_, err := l.Authenticate(ctx)
	return err == nil
}

// holds says m has every key of want, with its value.
func holds(m, want map[string]string) bool {
	for k, v := range want {
		if m[k] != v {
			return false
		}
	}
	return true
}
