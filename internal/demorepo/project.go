package demorepo

import (
	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/backup"
)

// The demo project's objects, by the names the console shows. They live
// here, next to the files their templates run, so that a template can never
// name a script the repository does not have (a test checks it).
const (
	KeyName         = "None"
	RepositoryName  = "Demo"
	InventoryName   = "Localhost"
	EnvironmentName = "Demo"
	ViewTitle       = "Build and deploy"

	AnsibleTemplate = "Hello Ansible"
	BashTemplate    = "Hello Bash"
	BuildTemplate   = "Build"
	DeployTemplate  = "Deploy"
	// StartVersion is the Build template's first version.
	StartVersion = "1.0.0"
)

// Project describes the demo project as a backup file would, with its
// repository at repoURL, so that the API creates it with the restore's
// code: names resolved to references, the build template before the
// deploy that names it, and nothing left behind if a step fails.
func Project(repoURL string) *backup.Backup {
	return &backup.Backup{
		Meta: backup.Meta{Name: "Demo"},
		Keys: []backup.Key{{Name: KeyName, Type: string(bastionv1.KeyTypeNone)}},
		Repositories: []backup.Repository{{
			Name: RepositoryName, GitURL: repoURL, GitBranch: Branch, SSHKey: KeyName,
		}},
		// The playbook runs on the runner itself, whatever the runner is.
		Inventories: []backup.Inventory{{
			Name: InventoryName, Type: string(bastionv1.InventoryStatic),
			Inventory: "localhost ansible_connection=local\n", SSHKey: KeyName,
		}},
		// who is an extra variable (ansible's vars, bash's who=… argument);
		// DEMO_GREETING an environment variable of the programs.
		Environments: []backup.Environment{{
			Name: EnvironmentName, JSON: `{"who":"Bastion"}`, Env: `{"DEMO_GREETING":"Hello from the Demo environment"}`,
		}},
		Views: []backup.View{{Title: ViewTitle, Position: 1}},
		Templates: []backup.Template{
			{
				Name: AnsibleTemplate, Description: "An Ansible playbook that runs on the runner itself and says hello.",
				App: string(bastionv1.AppAnsible), Playbook: "hello.yml",
				Repository: RepositoryName, Environment: EnvironmentName, Inventory: InventoryName,
			},
			{
				Name: BashTemplate, Description: "A bash script that prints the variables it is given.",
				App: string(bastionv1.AppBash), Playbook: "hello.sh",
				Repository: RepositoryName, Environment: EnvironmentName,
			},
			{
				Name: BuildTemplate, Description: "Builds a numbered version of the demo app.",
				Type: string(bastionv1.TemplateBuild), App: string(bastionv1.AppBash), Playbook: "build.sh",
				StartVersion: StartVersion, Repository: RepositoryName, Environment: EnvironmentName, View: ViewTitle,
			},
			{
				Name: DeployTemplate, Description: "Deploys a build; runs by itself after every successful Build.",
				Type: string(bastionv1.TemplateDeploy), App: string(bastionv1.AppBash), Playbook: "deploy.sh",
				BuildTemplate: BuildTemplate, Autorun: true,
				Repository: RepositoryName, Environment: EnvironmentName, View: ViewTitle,
			},
		},
		Integrations: []backup.Integration{}, IntegrationAliases: []string{}, Schedules: []backup.Schedule{},
	}
}
