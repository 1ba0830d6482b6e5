import '@mantine/core/styles.css';
import './styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app.tsx';
import { detectPlatform } from './platform/context.tsx';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App platform={detectPlatform()} />
  </StrictMode>,
);
