import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { AgentPage } from "./agent-page.js";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <AgentPage />
  </StrictMode>,
);
