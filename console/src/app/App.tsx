import { Route, Routes } from 'react-router-dom';
import { Loading, LoginPage, SignedInApp } from './lazyPages';
import { NotificationsProvider } from './Notifications';

/** Sign-in stands alone; everything else needs a session. */
export function App() {
  return (
    <NotificationsProvider>
      <Loading>
        <Routes>
          <Route path="/auth/login" element={<LoginPage />} />
          <Route path="*" element={<SignedInApp />} />
        </Routes>
      </Loading>
    </NotificationsProvider>
  );
}
