import { LaterScreen } from '../../app/LaterScreen';

// Placeholder: replaced by the console's part 2 and 3 (issues 8 and 9).
export function RepositoriesPage() {
  return <LaterScreen />;
}
