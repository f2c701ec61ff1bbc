// Package charttest renders deploy/helm/weft with Helm's Go SDK, without a
// cluster, and checks what it renders. It is a module of its own so that
// Helm's and Kubernetes' modules stay out of weft's.
package charttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const chartDir = "../helm/weft"

// valueSets are the documented value sets: the chart's defaults and the
// three tiers of testdata/.
var valueSets = []string{"default", "lite", "split", "ha"}

func values(t *testing.T, set string) map[string]any {
	t.Helper()
	if set == "default" {
		return map[string]any{}
	}
	v, err := chartutil.ReadValuesFile(filepath.Join("testdata", set+".yaml"))
	require.NoError(t, err)
	return v
}

// rendered is one release's manifests, decoded.
type rendered struct {
	deployments  []*appsv1.Deployment
	jobs         []*batchv1.Job
	services     []*corev1.Service
	pdbs         []*policyv1.PodDisruptionBudget
	hpas         []*autoscalingv2.HorizontalPodAutoscaler
	configMaps   []*corev1.ConfigMap
	ingresses    []*networkingv1.Ingress
	routes       []*httpRoute
	monitors     []*serviceMonitor
	rules        []*prometheusRule
	values       chartutil.Values
	kindsInOrder []string
}

func load(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	require.NoError(t, err)
	return c
}

// render renders the chart as `helm install` would (schema validated) and
// decodes every manifest strictly: a field its type lacks fails.
func render(t *testing.T, vals map[string]any) *rendered {
	t.Helper()
	c := load(t)
	rv, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: "weft", Namespace: "weft", IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities)
	require.NoError(t, err)
	out, err := engine.Render(c, rv)
	require.NoError(t, err)
	r := &rendered{values: rv["Values"].(chartutil.Values)}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		for _, doc := range strings.Split(out[name], "\n---") {
			js, err := yaml.YAMLToJSON([]byte(doc))
			require.NoError(t, err, name)
			if string(js) == "null" {
				continue
			}
			var meta metav1.TypeMeta
			require.NoError(t, json.Unmarshal(js, &meta), name)
			r.kindsInOrder = append(r.kindsInOrder, meta.Kind)
			switch meta.Kind {
			case "Deployment":
				r.deployments = append(r.deployments, decode[appsv1.Deployment](t, name, js))
			case "Job":
				r.jobs = append(r.jobs, decode[batchv1.Job](t, name, js))
			case "Service":
				r.services = append(r.services, decode[corev1.Service](t, name, js))
			case "PodDisruptionBudget":
				r.pdbs = append(r.pdbs, decode[policyv1.PodDisruptionBudget](t, name, js))
			case "HorizontalPodAutoscaler":
				r.hpas = append(r.hpas, decode[autoscalingv2.HorizontalPodAutoscaler](t, name, js))
			case "ConfigMap":
				r.configMaps = append(r.configMaps, decode[corev1.ConfigMap](t, name, js))
			case "Ingress":
				r.ingresses = append(r.ingresses, decode[networkingv1.Ingress](t, name, js))
			case "HTTPRoute":
				r.routes = append(r.routes, decode[httpRoute](t, name, js))
			case "ServiceMonitor":
				r.monitors = append(r.monitors, decode[serviceMonitor](t, name, js))
			case "PrometheusRule":
				r.rules = append(r.rules, decode[prometheusRule](t, name, js))
			default:
				t.Fatalf("%s: a %q the test does not know", name, meta.Kind)
			}
		}
	}
	return r
}

func decode[T any](t *testing.T, name string, js []byte) *T {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	v := new(T)
	require.NoError(t, dec.Decode(v), "%s does not decode strictly as %T", name, v)
	return v
}

// TestLint is `helm lint` (no helm binary here: its Go SDK), strict, for
// each value set.
func TestLint(t *testing.T) {
	for _, set := range valueSets {
		t.Run(set, func(t *testing.T) {
			l := lint.All(chartDir, values(t, set), "weft", false)
			for _, m := range l.Messages {
				require.Less(t, m.Severity, support.WarningSev, "helm lint: %s", m)
			}
		})
	}
}

// TestRender checks the invariants of every value set's manifests.
func TestRender(t *testing.T) {
	reads := envWeftReads(t)
	for _, set := range valueSets {
		t.Run(set, func(t *testing.T) {
			r := render(t, values(t, set))
			roles := map[string]*appsv1.Deployment{}
			for _, d := range r.deployments {
				roles[d.Spec.Template.Labels["app.kubernetes.io/component"]] = d
			}
			switch r.values["mode"] {
			case "lite":
				require.Len(t, roles, 1)
				require.Contains(t, roles, "all")
			case "split":
				require.Len(t, roles, 2)
				require.Contains(t, roles, "api")
				require.Contains(t, roles, "worker")
			}

			shutdown, err := time.ParseDuration(r.values["shutdownTimeout"].(string))
			require.NoError(t, err)
			for role, d := range roles {
				spec := d.Spec.Template.Spec
				require.True(t, labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)), "%s selects its pods", d.Name)
				require.NotNil(t, spec.TerminationGracePeriodSeconds)
				require.Greater(t, time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second, shutdown, "%s: the grace period outlasts WEFT_SHUTDOWN_TIMEOUT", d.Name)
				checkPod(t, d.Name, spec, reads)
				c := spec.Containers[0]
				require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path, d.Name)
				require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path, d.Name)
				require.Equal(t, "metrics", c.ReadinessProbe.HTTPGet.Port.String(), "%s: probes on WEFT_METRICS_ADDR, which every role serves", d.Name)
				require.Equal(t, role, envValue(c, "WEFT_ROLE"))
				require.Equal(t, shutdown.String(), mustDuration(t, envValue(c, "WEFT_SHUTDOWN_TIMEOUT")).String())
				require.Equal(t, []string{"serve"}, c.Args)
			}

			// The migration hook: one Job, before install and upgrade.
			require.Len(t, r.jobs, 1)
			job := r.jobs[0]
			require.Equal(t, "pre-install,pre-upgrade", job.Annotations["helm.sh/hook"])
			require.Equal(t, []string{"migrate", "up"}, job.Spec.Template.Spec.Containers[0].Args)
			require.Equal(t, corev1.RestartPolicyNever, job.Spec.Template.Spec.RestartPolicy)
			checkPod(t, job.Name, job.Spec.Template.Spec, reads)

			// Every Service and PDB selects pods of this release.
			for _, s := range r.services {
				require.NotEmpty(t, selects(s.Spec.Selector, r.deployments), "Service %s selects no pods", s.Name)
			}
			http := r.services[slices.IndexFunc(r.services, func(s *corev1.Service) bool { return s.Name == "weft" })]
			for _, d := range selects(http.Spec.Selector, r.deployments) {
				require.NotEqual(t, "worker", d.Spec.Template.Labels["app.kubernetes.io/component"], "the doors' Service sends nothing to a worker")
			}
			pdbRoles := map[string]bool{}
			for _, p := range r.pdbs {
				sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
				require.NoError(t, err)
				var n int
				for role, d := range roles {
					if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
						n++
						pdbRoles[role] = true
					}
				}
				require.Equal(t, 1, n, "PDB %s selects one role's pods", p.Name)
			}
			for _, h := range r.hpas {
				require.Contains(t, deploymentNames(r.deployments), h.Spec.ScaleTargetRef.Name, "HPA %s scales a Deployment", h.Name)
				require.Nil(t, roles[strings.TrimPrefix(h.Spec.ScaleTargetRef.Name, "weft-")].Spec.Replicas, "an HPA's Deployment leaves replicas to it")
			}
			for _, m := range r.monitors {
				require.NotEmpty(t, selectsService(m.Spec.Selector.MatchLabels, r.services), "ServiceMonitor %s selects a Service", m.Name)
			}

			switch set {
			case "ha":
				require.Len(t, r.hpas, 2)
				require.Equal(t, map[string]bool{"api": true, "worker": true}, pdbRoles, "a PDB per role")
				for _, h := range r.hpas {
					if strings.HasSuffix(h.Name, "worker") {
						require.Equal(t, autoscalingv2.ExternalMetricSourceType, h.Spec.Metrics[0].Type)
					} else {
						require.Equal(t, corev1.ResourceCPU, h.Spec.Metrics[0].Resource.Name)
					}
				}
				require.Len(t, r.monitors, 1)
				require.Len(t, r.rules, 1)
				require.Len(t, r.configMaps, 1)
			case "lite":
				require.Len(t, r.ingresses, 1)
				require.Len(t, r.configMaps, 1)
				require.Equal(t, map[string]bool{"all": true}, pdbRoles)
			case "split":
				require.Len(t, r.routes, 1)
				require.Empty(t, r.ingresses)
				require.Equal(t, "weft", r.routes[0].Spec.Rules[0].BackendRefs[0].Name)
			case "default":
				require.Empty(t, r.hpas)
				require.Empty(t, r.monitors)
				require.Empty(t, r.rules)
				require.Empty(t, r.ingresses)
			}
		})
	}
}

// checkPod: resources and a non-root, locked-down securityContext on
// every container, secrets from the existing Secret only, and each
// variable set one that weft reads.
func checkPod(t *testing.T, name string, spec corev1.PodSpec, reads map[string]bool) {
	t.Helper()
	require.NotNil(t, spec.SecurityContext, name)
	require.True(t, *spec.SecurityContext.RunAsNonRoot, name)
	require.NotNil(t, spec.AutomountServiceAccountToken)
	require.False(t, *spec.AutomountServiceAccountToken, "%s: weft needs no Kubernetes API", name)
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		where := name + "/" + c.Name
		require.NotEmpty(t, c.Resources.Requests.Cpu().String(), where)
		require.False(t, c.Resources.Requests.Memory().IsZero(), "%s: memory request", where)
		require.False(t, c.Resources.Limits.Memory().IsZero(), "%s: memory limit", where)
		sc := c.SecurityContext
		require.NotNil(t, sc, where)
		require.True(t, *sc.RunAsNonRoot, where)
		require.NotZero(t, *sc.RunAsUser, where)
		require.False(t, *sc.AllowPrivilegeEscalation, where)
		require.True(t, *sc.ReadOnlyRootFilesystem, where)
		require.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, where)
		for _, e := range c.Env {
			require.True(t, reads[e.Name], "%s sets %s, which weft does not read", where, e.Name)
			require.Nil(t, e.ValueFrom, "%s: secrets come from the existing Secret", where)
		}
		require.Len(t, c.EnvFrom, 1, where)
		require.NotNil(t, c.EnvFrom[0].SecretRef, where)
	}
}

// envWeftReads is every variable weft's source names: the upper-case
// string literals with an underscore in its non-test Go files (getenv
// calls, and the keys of the tables LoadConfig reads).
func envWeftReads(t *testing.T) map[string]bool {
	t.Helper()
	lit := regexp.MustCompile(`"([A-Z][A-Z0-9]*_[A-Z0-9_]+)"`)
	reads := map[string]bool{}
	for _, dir := range []string{"../../internal", "../../cmd/weft", "../../db"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range lit.FindAllSubmatch(b, -1) {
				reads[string(m[1])] = true
			}
			return nil
		})
		require.NoError(t, err)
	}
	for _, v := range []string{"DATABASE_URL", "WEFT_ROLE", "WEFT_METRICS_ADDR", "WEFT_SHUTDOWN_TIMEOUT"} {
		require.True(t, reads[v], "the scan finds %s", v)
	}
	return reads
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	require.NoError(t, err)
	return d
}

func selects(sel map[string]string, ds []*appsv1.Deployment) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for _, d := range ds {
		if len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(d.Spec.Template.Labels)) {
			out = append(out, d)
		}
	}
	return out
}

func selectsService(sel map[string]string, ss []*corev1.Service) []*corev1.Service {
	var out []*corev1.Service
	for _, s := range ss {
		if len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(s.Labels)) {
			out = append(out, s)
		}
	}
	return out
}

func deploymentNames(ds []*appsv1.Deployment) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

// TestRefusals: what the chart must not render.
func TestRefusals(t *testing.T) {
	c := load(t)
	for name, tt := range map[string]struct {
		vals map[string]any
		want string
	}{
		"grace within the drain": {map[string]any{"shutdownTimeout": "60s", "terminationGracePeriodSeconds": 60}, "must be longer than shutdownTimeout"},
		"no secret":              {map[string]any{"existingSecret": ""}, "existingSecret"},
		"unknown mode":           {map[string]any{"mode": "cluster"}, "mode"},
		"root":                   {map[string]any{"securityContext": map[string]any{"runAsNonRoot": false, "allowPrivilegeEscalation": false}}, "runAsNonRoot"},
		"env the chart sets":     {map[string]any{"env": map[string]any{"WEFT_ROLE": "all"}}, "WEFT_ROLE"},
		"ingress and route":      {map[string]any{"ingress": map[string]any{"enabled": true}, "httpRoute": map[string]any{"enabled": true}}, "enable one"},
		"unknown value":          {map[string]any{"replicas": 3}, "replicas"},
	} {
		t.Run(name, func(t *testing.T) {
			rv, err := chartutil.ToRenderValues(c, tt.vals, chartutil.ReleaseOptions{Name: "weft", Namespace: "weft", IsInstall: true}, chartutil.DefaultCapabilities)
			if err == nil {
				_, err = engine.Render(c, rv)
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// TestMonitoringFilesAreDeploys: the chart's copies of deploy/prometheus
// and deploy/grafana (Helm reads no file outside the chart) are equal to
// them, and the PrometheusRule carries every alert.
func TestMonitoringFilesAreDeploys(t *testing.T) {
	for copy, orig := range map[string]string{
		"files/alerts.yml": "../prometheus/alerts.yml",
		"files/weft.json":  "../grafana/weft.json",
	} {
		a, err := os.ReadFile(filepath.Join(chartDir, copy))
		require.NoError(t, err)
		b, err := os.ReadFile(orig)
		require.NoError(t, err)
		require.Equal(t, string(b), string(a), "%s is a copy of %s: cp %s deploy/helm/weft/%s", copy, orig, strings.TrimPrefix(orig, "../"), copy)
	}
	r := render(t, values(t, "ha"))
	var src struct {
		Groups []ruleGroup `json:"groups"`
	}
	b, err := os.ReadFile("../prometheus/alerts.yml")
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(b, &src))
	require.Equal(t, src.Groups, r.rules[0].Spec.Groups)
	var dash map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.configMaps[0].Data["weft.json"]), &dash))
	require.Equal(t, "1", r.configMaps[0].Labels["grafana_dashboard"])
	require.NotEmpty(t, dash["panels"], fmt.Sprintf("%v", dash["title"]))
}
