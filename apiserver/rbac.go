package apiserver

// What the API server does with the Kubernetes API, for controller-gen's
// ClusterRole (config/rbac/role.yaml, `make manifests`). The server is the
// product's write path: every /api create, update and delete becomes a
// write of a resource, so it needs the write verbs on each kind that the
// controllers only read. Reads come from the manager's cache (get, list,
// watch), which the controllers' markers already grant.
//
// Project resources: the /api CRUD routes, backup restore (which also
// deletes a half-restored project), task start and stop.
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=projects;templates;repositories;inventories;environments;views;schedules;integrations;integrationaliases;tasks,verbs=get;list;watch;create;update;patch;delete
//
// Keys, environment secrets, integration secrets and survey answers live in
// Secrets of project namespaces, and id counters in ConfigMaps: the
// manager's rights on both come from internal/nsaccess, bound in each
// project namespace, never cluster-wide. Creating a project binds them in
// its new namespace at once, so that the next call can write there.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;create;update;delete
//
// A project created through /api gets its namespace at once (the Project
// controller adopts it), so the next call can create resources in it;
// restore deletes the namespace of a project it rolls back.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;create;delete
