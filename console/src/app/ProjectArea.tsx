// Everything under /project/: the drawer frame with a project's pages, or
// with the new-project screen. One lazily loaded chunk, so /users does not
// carry the drawer and the project screens; the new-project form loads on
// its own, so the project pages do not carry it.
import { lazy } from 'react';
import { Loading } from './lazyPages';
import { ProjectFrame } from './ProjectFrame';
import { ProjectRoutes } from './ProjectRoutes';

const NewProjectForm = lazy(async () => ({ default: (await import('../resources/projects/NewProjectPage')).NewProjectPage }));

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
      <Loading>
        <NewProjectForm />
      </Loading>
    </ProjectFrame>
  );
}
