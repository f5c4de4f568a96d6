import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ChatPage } from "./chat-page.js";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <ChatPage />
  </StrictMode>,
);
