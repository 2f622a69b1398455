import { lazy } from 'react';
import { Navigate, Route, Routes, useLocation, useParams } from 'react-router-dom';
import { Loading } from '../../app/lazyPages';
import { Permission, useProjectAccess } from '../../app/permissions';

// The list, the detail and the editor each load when opened: the list
// (the screen users open most) carries neither the form nor the
// schedules, and the detail and the editor do not carry the list's table.
const TemplateList = lazy(async () => ({ default: (await import('./TemplateList')).TemplateList }));
const TemplateDetail = lazy(async () => ({ default: (await import('./TemplateDetail')).TemplateDetail }));
const TemplateEditor = lazy(async () => ({ default: (await import('./TemplateEditor')).TemplateEditor }));

/**
 * The template screens (docs/features.md §2), mounted at both /project/{id}/templates/*
 * and /project/{id}/views/*: the list, a template's detail and its editor,
 * with or without a view. The id "new" goes to …/templates/new/edit.
 */
export function TemplateRoutes() {
  const inViews = /^\/project\/\d+\/views(\/|$)/.test(useLocation().pathname);
  return inViews ? (
    <Routes>
      <Route path=":viewId/templates/*" element={<ViewTemplateRoutes />} />
      <Route path="*" element={<ToList />} />
    </Routes>
  ) : (
    <TemplatePages />
  );
}

function ViewTemplateRoutes() {
  const viewId = Number(useParams().viewId);
  if (!Number.isInteger(viewId) || viewId <= 0) return <ToList />;
  return <TemplatePages viewId={viewId} />;
}

/** The routes under …/templates, the same with or without a view. */
function TemplatePages({ viewId }: { viewId?: number }) {
  return (
    <Routes>
      <Route
        index
        element={
          <Loading>
            <TemplateList key={viewId ?? 'all'} viewId={viewId} />
          </Loading>
        }
      />
      <Route path="new" element={<NewTemplate />} />
      <Route path="new/edit" element={<Editor />} />
      <Route path=":templateId" element={<Detail viewId={viewId} />} />
      <Route path=":templateId/edit" element={<Editor viewId={viewId} />} />
      <Route path="*" element={<ToList />} />
    </Routes>
  );
}

function ToList() {
  const { project } = useProjectAccess();
  return <Navigate to={`/project/${project.id}/templates`} replace />;
}

/** /templates/new and …/views/{vid}/templates/new go to /templates/new/edit (docs/features.md §2). */
function NewTemplate() {
  const { project } = useProjectAccess();
  return <Navigate to={`/project/${project.id}/templates/new/edit${useLocation().search}`} replace />;
}

function templateIdOf(param: string | undefined): number | undefined {
  const id = Number(param);
  return Number.isInteger(id) && id > 0 ? id : undefined;
}

function Detail({ viewId }: { viewId?: number }) {
  const templateId = templateIdOf(useParams().templateId);
  if (templateId === undefined) return <ToList />;
  return (
    <Loading>
      <TemplateDetail key={templateId} templateId={templateId} viewId={viewId} />
    </Loading>
  );
}

/** The editor needs manageProjectResources (docs/features.md §6); others see the template. */
function Editor({ viewId }: { viewId?: number }) {
  const { project, can } = useProjectAccess();
  const param = useParams().templateId;
  const templateId = templateIdOf(param);
  if (param !== undefined && templateId === undefined) return <ToList />;
  if (!can(Permission.manageProjectResources)) {
    return <Navigate to={templateId ? `/project/${project.id}/templates/${templateId}` : `/project/${project.id}/templates`} replace />;
  }
  return (
    <Loading>
      <TemplateEditor key={templateId ?? 'new'} templateId={templateId} viewId={viewId} />
    </Loading>
  );
}
