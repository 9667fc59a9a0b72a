package check

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/istioctl-installer/istioctl/operator/kube/ref"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/link/readerchart"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// SectionLinks holds the link checks.
const SectionLinks = "Links to other clusters"

// ExpiryWarning is how long before its token expires a link warns.
const ExpiryWarning = 7 * 24 * time.Hour

// linkCache holds the survey the link checks share, taken once per run.
type linkCache struct {
	once   sync.Once
	survey *link.Survey
	err    error
}

// Survey is what the link checks look at, taken once per run: the link Secrets, a probe of
// each with its own credentials, and what the istiods say.
func (e *Env) Survey(ctx context.Context) (*link.Survey, error) {
	if e.links == nil {
		e.links = &linkCache{}
	}
	e.links.once.Do(func() {
		reader, err := readerchart.Render(e.ManifestsDir, e.IstioNamespace, e.Version)
		if err != nil {
			e.links.err = err
			return
		}
		e.links.survey, e.links.err = link.Take(ctx, e.Client, link.SurveyOptions{Namespace: e.IstioNamespace, Revision: e.Revision, Access: reader.Access(), Bindings: reader.Bindings()})
	})
	return e.links.survey, e.links.err
}

// eachLink runs fn on every link of the survey. With none, or without the survey, the
// first check (say) has one result saying why; the others none.
func eachLink(ctx context.Context, env *Env, fn func(s *link.Survey, i int, l *link.Link) []Result) []Result {
	return linksOr(ctx, env, false, fn)
}

func linksOr(ctx context.Context, env *Env, say bool, fn func(s *link.Survey, i int, l *link.Link) []Result) []Result {
	s, err := env.Survey(ctx)
	if (err != nil || len(s.Links) == 0) && !say {
		return nil
	}
	if err != nil {
		r := Result{Object: ref.New("Namespace", "", env.IstioNamespace).String(), Message: "cannot read the link Secrets: " + err.Error()}
		if apierrors.IsForbidden(err) {
			r.Severity = Warning
			r.Hint = "reading Secrets in the istio namespace needs get and list on secrets there (x precheck lists it)"
		}
		return []Result{r}
	}
	if len(s.Links) == 0 {
		return []Result{{Object: ref.New("Namespace", "", env.IstioNamespace).String(), Passed: true, Severity: Info,
			Message: fmt.Sprintf("no link Secret (label %s=true): istiod reads no other cluster", ownership.LabelMultiCluster)}}
	}
	var out []Result
	for i := range s.Links {
		l := &s.Links[i]
		for _, r := range fn(s, i, l) {
			if r.Object == "" {
				r.Object = l.Ref().String()
			}
			r.Section = "Link to " + l.ClusterID
			out = append(out, r)
		}
	}
	return out
}

func linkNamespace(ctx context.Context, env *Env) []Result {
	out := linksOr(ctx, env, true, func(s *link.Survey, _ int, l *link.Link) []Result {
		if l.Namespace != s.Namespace {
			return []Result{{Message: fmt.Sprintf("in namespace %s: istiod reads link Secrets only from %s, so it never reads this one", l.Namespace, s.Namespace)}}
		}
		return []Result{{Passed: true, Message: "in " + s.Namespace + ", where istiod reads it"}}
	})
	if s, err := env.Survey(ctx); err == nil && !s.Everywhere {
		out = append(out, Result{Object: "(Cluster)", Passed: true, Severity: Info,
			Message: "link Secrets outside " + s.Namespace + " were not looked for: listing Secrets in every namespace is forbidden"})
	}
	return out
}

func linkClusterID(ctx context.Context, env *Env) []Result {
	return eachLink(ctx, env, func(s *link.Survey, _ int, l *link.Link) []Result {
		self := selfNames(env, s)
		switch {
		case l.Type == link.TypeRemote && l.Annotation != l.ClusterID:
			return []Result{{Message: fmt.Sprintf("its %s annotation says %q but its data key, the ID istiod registers, is %q: edited or copied by hand", ownership.AnnotationCluster, l.Annotation, l.ClusterID)}}
		case l.Type == link.TypeRemote && l.Name != ownership.RemoteSecretName(l.ClusterID):
			return []Result{{Passed: true, Severity: Info, Message: fmt.Sprintf("cluster ID %q; the Secret is not named %s, as create-remote-secret names it", l.ClusterID, ownership.RemoteSecretName(l.ClusterID))}}
		case len(validation.IsDNS1123Label(l.ClusterID)) > 0 && l.Type == link.TypeRemote:
			return []Result{{Message: fmt.Sprintf("cluster ID %q is not a DNS-1123 label (lower-case letters, digits and '-')", l.ClusterID)}}
		case l.Type == link.TypeRemote && self[l.ClusterID] != "":
			return []Result{{Message: fmt.Sprintf("cluster ID %q is this cluster's own name (%s): istiod ignores a link to itself", l.ClusterID, self[l.ClusterID])}}
		}
		return []Result{{Passed: true, Message: fmt.Sprintf("cluster ID %q in its data key and annotation", l.ClusterID)}}
	})
}

// selfNames are this cluster's names: the spec's clusterName and its istiods' CLUSTER_ID.
func selfNames(env *Env, s *link.Survey) map[string]string {
	out := map[string]string{}
	for _, n := range s.Self {
		out[n.Name] = n.From
	}
	if env.ClusterName != "" {
		out[env.ClusterName] = "the spec's values.global.multiCluster.clusterName"
	}
	return out
}

func linkDuplicate(ctx context.Context, env *Env) []Result {
	return eachLink(ctx, env, func(s *link.Survey, i int, l *link.Link) []Result {
		if l.Namespace != s.Namespace || l.Type != link.TypeRemote {
			return []Result{{Passed: true, Severity: Info, Message: "not read by istiod from here: not compared"}}
		}
		var others []string
		for j := range s.Links {
			o := &s.Links[j]
			if j != i && o.Namespace == s.Namespace && o.Type == link.TypeRemote && o.ClusterID == l.ClusterID {
				others = append(others, o.Secret())
			}
		}
		if len(others) > 0 {
			return []Result{{Message: fmt.Sprintf("cluster ID %q is also in %s: istiod reads only one of them", l.ClusterID, strings.Join(others, ", "))}}
		}
		return []Result{{Passed: true, Message: fmt.Sprintf("the only link Secret for cluster ID %q", l.ClusterID)}}
	})
}

func linkKubeconfig(ctx context.Context, env *Env) []Result {
	return eachLink(ctx, env, func(_ *link.Survey, _ int, l *link.Link) []Result {
		if _, err := l.Config(); err != nil {
			return []Result{{Message: err.Error()}}
		}
		return []Result{{Passed: true, Message: "its kubeconfig decodes; server " + l.Server()}}
	})
}

func linkAuthMethod(ctx context.Context, env *Env) []Result {
	return eachLink(ctx, env, func(s *link.Survey, _ int, l *link.Link) []Result {
		cfg, err := l.Config()
		if err != nil {
			return nil // link-kubeconfig says so
		}
		methods := link.Methods(cfg)
		if refused := link.Refused(methods, s.Allowed); len(refused) > 0 {
			var names []string
			for _, m := range refused {
				names = append(names, fmt.Sprintf("%s (PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS must list %q)", m.Name, m.Option))
			}
			return []Result{{Message: "authenticates with " + strings.Join(names, ", ") + ": istiod refuses the kubeconfig"}}
		}
		var names []string
		for _, m := range methods {
			names = append(names, m.Name)
		}
		return []Result{{Passed: true, Message: "authenticates with " + strings.Join(names, ", ") + ", which istiod accepts"}}
	})
}

// eachAuthenticated runs fn on every link whose probe authenticated at its apiserver: for
// the others an earlier check (link-kubeconfig, link-authenticates) already says why not.
func eachAuthenticated(ctx context.Context, env *Env, fn func(s *link.Survey, l *link.Link, p *link.Probe) []Result) []Result {
	return eachLink(ctx, env, func(s *link.Survey, i int, l *link.Link) []Result {
		p := s.Probes[i]
		if p == nil || p.Cause == "decode" || p.Cause == "credentials" || p.Err != nil {
			return nil
		}
		return fn(s, l, p)
	})
}

func linkAuthenticates(ctx context.Context, env *Env) []Result {
	return eachLink(ctx, env, func(s *link.Survey, i int, l *link.Link) []Result {
		p := s.Probes[i]
		switch {
		case p == nil || p.Cause == "decode":
			return nil
		case p.Cause == "credentials":
			return []Result{{Passed: true, Severity: Info, Message: "not checked: " + p.Err.Error()}}
		case p.Err != nil && p.Cause == "unreachable" && synced(s, i):
			return []Result{{Severity: Warning, Message: fmt.Sprintf("cannot reach %s from here (%v), but istiod reports the cluster synced: it can", l.Server(), p.Err)}}
		case p.Err != nil:
			return []Result{{Message: p.Err.Error()}}
		}
		return []Result{{Passed: true, Message: fmt.Sprintf("authenticates at %s as %s", l.Server(), p.User)}}
	})
}

func synced(s *link.Survey, i int) bool {
	for _, st := range s.Statuses(i) {
		if st == "synced" {
			return true
		}
	}
	return false
}

func linkPermissions(ctx context.Context, env *Env) []Result {
	return eachAuthenticated(ctx, env, func(s *link.Survey, _ *link.Link, p *link.Probe) []Result {
		switch {
		case p.AccessErr != nil:
			return []Result{{Message: p.AccessErr.Error()}}
		case len(p.Denied) == len(s.Access):
			return []Result{{Message: fmt.Sprintf("%s may do none of the %d things the reader ClusterRole grants: is %s there?", p.User, len(s.Access), strings.Join(s.Bindings, ", "))}}
		case len(p.Denied) > 0:
			return []Result{{Message: fmt.Sprintf("%s may not %s (%d of the %d things the reader ClusterRole grants)", p.User, deniedList(p.Denied), len(p.Denied), len(s.Access))}}
		}
		return []Result{{Passed: true, Message: fmt.Sprintf("%s may do all %d things the reader ClusterRole grants", p.User, len(s.Access))}}
	})
}

// deniedList names denied access compactly, a resource's verbs together, the first few
// resources only.
func deniedList(denied []link.Access) string {
	const most = 6
	verbs := map[string][]string{}
	var order []string
	for _, a := range denied {
		res := a.Resource
		if a.Group != "" {
			res += "." + a.Group
		}
		if _, ok := verbs[res]; !ok {
			order = append(order, res)
		}
		verbs[res] = append(verbs[res], a.Verb)
	}
	var parts []string
	for i, res := range order {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(order)-most))
			break
		}
		parts = append(parts, strings.Join(verbs[res], ",")+" "+res)
	}
	return strings.Join(parts, "; ")
}

// mayNot says the probe found the identity may not do verb on resource.
func mayNot(p *link.Probe, verb, resource string) bool {
	for _, a := range p.Denied {
		if a.Group == "" && a.Resource == resource && a.Verb == verb {
			return true
		}
	}
	return false
}

func linkClusterName(ctx context.Context, env *Env) []Result {
	return eachAuthenticated(ctx, env, func(_ *link.Survey, l *link.Link, p *link.Probe) []Result {
		switch {
		case mayNot(p, "list", "pods"):
			return []Result{{Passed: true, Severity: Info, Message: "not checked: the identity may not list pods there (see the permissions above)"}}
		case p.NameErr != nil:
			return []Result{{Severity: Warning, Message: "cannot read that cluster's name: " + p.NameErr.Error()}}
		case len(p.Names) == 0:
			return []Result{{Severity: Warning, Message: "that cluster does not say its name: no istiod pod there, and no injector with a /inject/cluster/<name>/ path the identity may read"}}
		}
		var names []string
		for _, n := range p.Names {
			if n.Name == l.ClusterID {
				return []Result{{Passed: true, Message: fmt.Sprintf("the cluster's name is %q (%s)", n.Name, n.From)}}
			}
			names = append(names, fmt.Sprintf("%q (%s)", n.Name, n.From))
		}
		return []Result{{Message: fmt.Sprintf("cluster ID %q, but that cluster calls itself %s: its endpoints and proxies will not match this link", l.ClusterID, strings.Join(names, ", "))}}
	})
}

func linkTokenExpiry(ctx context.Context, env *Env) []Result {
	now := time.Now()
	return eachLink(ctx, env, func(_ *link.Survey, _ int, l *link.Link) []Result {
		return []Result{expiryResult(l, now)}
	})
}

// expiryResult judges a link's token expiry at now.
func expiryResult(l *link.Link, now time.Time) Result {
	if _, err := l.Config(); err != nil {
		return Result{Passed: true, Severity: Info, Message: "not checked: the kubeconfig does not decode"}
	}
	exp, ok := l.Expiry()
	switch {
	case !ok:
		return Result{Passed: true, Severity: Info, Message: "its token carries no expiry (a long-lived ServiceAccount token, or no token): it lasts until its token Secret is deleted"}
	case !exp.After(now):
		return Result{Severity: Error, Message: fmt.Sprintf("its token expired at %s", exp.UTC().Format(time.RFC3339))}
	case exp.Sub(now) < ExpiryWarning:
		return Result{Message: fmt.Sprintf("its token expires at %s, in %s", exp.UTC().Format(time.RFC3339), exp.Sub(now).Round(time.Minute))}
	}
	return Result{Passed: true, Message: fmt.Sprintf("its token expires at %s, in %d days", exp.UTC().Format(time.RFC3339), int(exp.Sub(now).Hours()/24))}
}

func linkServer(ctx context.Context, env *Env) []Result {
	return eachLink(ctx, env, func(_ *link.Survey, _ int, l *link.Link) []Result {
		server := l.Server()
		switch {
		case server == "":
			return nil
		case link.Loopback(server):
			return []Result{{Message: fmt.Sprintf("%s is a loopback address: only an istiod on this same host reaches it", server)}}
		}
		return []Result{{Passed: true, Message: "server " + server}}
	})
}

func linkIstiod(ctx context.Context, env *Env) []Result {
	return eachLink(ctx, env, func(s *link.Survey, i int, l *link.Link) []Result {
		if l.Namespace != s.Namespace {
			return nil
		}
		statuses := s.Statuses(i)
		if len(statuses) == 0 {
			return []Result{{Passed: true, Severity: Info, Message: "not checked: " + istiodReason(s)}}
		}
		pods := make([]string, 0, len(statuses))
		for pod := range statuses {
			pods = append(pods, pod)
		}
		sort.Strings(pods)
		var out []Result
		for _, pod := range pods {
			r := Result{Message: fmt.Sprintf("istiod %s reports %s", pod, statuses[pod])}
			switch statuses[pod] {
			case "synced":
				r.Passed = true
			case "syncing":
				r.Severity = Warning
			case link.StatusNotRegistered:
				r.Message = fmt.Sprintf("istiod %s does not list this cluster from this Secret", pod)
			}
			out = append(out, r)
		}
		return out
	})
}

// istiodReason says why no istiod's view is known.
func istiodReason(s *link.Survey) string {
	switch {
	case s.IstiodsErr != nil:
		return "could not list the istiod pods: " + s.IstiodsErr.Error()
	case len(s.Istiods) == 0:
		return "no istiod runs in " + s.Namespace + " to ask"
	}
	var errs []string
	for _, v := range s.Istiods {
		if v.Err != nil {
			errs = append(errs, v.Err.Error())
		}
	}
	return "could not ask istiod: " + strings.Join(errs, "; ")
}
