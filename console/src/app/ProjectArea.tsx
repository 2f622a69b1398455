// Everything under /project/: the drawer frame with a project's pages, or
// with the new-project screen. One lazily loaded chunk, so /users does not
// carry the drawer and the project screens.
import { NewProjectPage as NewProjectForm } from '../resources/projects/NewProjectPage';
import { ProjectFrame } from './ProjectFrame';
import { ProjectRoutes } from './ProjectRoutes';

export function ProjectPages() {
  return (
    <ProjectFrame>
      <ProjectRoutes />
    </ProjectFrame>
  );
}

export function NewProjectPage() {
  return (
    <ProjectFrame>
      <NewProjectForm />
    </ProjectFrame>
  );
}
