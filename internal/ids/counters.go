package ids

// Counter names: one counter per kind, the data key of the kind's entry in
// the bastion-ids ConfigMap. Projects and users count in the manager's
// namespace (their ids are global); everything else counts in its
// project's namespace, so each project numbers its own objects from 1.
const (
	CounterProject          = "project"
	CounterUser             = "user"
	CounterTemplate         = "template"
	CounterTask             = "task"
	CounterSchedule         = "schedule"
	CounterInventory        = "inventory"
	CounterEnvironment      = "environment"
	CounterRepository       = "repository"
	CounterView             = "view"
	CounterIntegration      = "integration"
	CounterIntegrationAlias = "integrationalias"
	CounterKey              = "key"

	// Matchers and extracted values are list items of an Integration's
	// spec, not objects, but the /api addresses them by id too.
	CounterIntegrationMatcher = "integration-matcher"
	CounterIntegrationValue   = "integration-value"
)
